/**
 * Roles, pins, sizes and the text of the AI SDK's `ModelMessage`s (contract §3); adapter.ts
 * hands them to the shared core (src/integrations/compaction).
 */
import type { ModelMessage } from 'ai';
import type { Role } from '../../engine/events';
import type * as core from '../compaction/adapter';
import { defaultPinsOf, roleFor } from '../compaction/pins';

export type ClassifyContext = core.ClassifyContext<ModelMessage>;
/** What a summary must re-assert of one message. */
export type PinClassifier = core.PinClassifier<ModelMessage>;
/** Counts a list of messages in tokens, as the orchestrator counts its context. */
export type TokenCounter = core.TokenCounter<ModelMessage>;

type Part = { type: string } & Record<string, unknown>;

function parts(m: ModelMessage): readonly Part[] {
  return typeof m.content === 'string'
    ? [{ type: 'text', text: m.content }]
    : (m.content as unknown as readonly Part[]);
}

export function toolCallIds(m: ModelMessage): string[] {
  if (m.role !== 'assistant') return [];
  return parts(m)
    .filter((p) => p.type === 'tool-call')
    .map((p) => p.toolCallId as string);
}

export function toolResultIds(m: ModelMessage): string[] {
  return parts(m)
    .filter((p) => p.type === 'tool-result')
    .map((p) => p.toolCallId as string);
}

export function roleOf(m: ModelMessage): Role {
  return roleFor(m.role, toolCallIds(m).length > 0);
}

/** The message's text parts, joined. */
export function textOf(m: ModelMessage): string {
  return parts(m)
    .map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .join('');
}

/** Everything of a message a model reads, as text (tool inputs and outputs as JSON). */
export function readableText(m: ModelMessage): string {
  return parts(m)
    .map((p) => {
      if (p.type === 'text' || p.type === 'reasoning') return String(p.text ?? '');
      if (p.type === 'tool-call') return `${String(p.toolName)}(${JSON.stringify(p.input)})`;
      if (p.type === 'tool-result') {
        const out = p.output as { type?: string; value?: unknown } | undefined;
        return typeof out?.value === 'string' ? out.value : JSON.stringify(out?.value ?? out);
      }
      return '';
    })
    .join('\n');
}

/** About four characters a token, at least one a message (as langchain's approximate counter). */
export const approximateTokens: TokenCounter = (messages) =>
  messages.reduce((n, m) => n + Math.max(1, Math.ceil(readableText(m).length / 4)), 0);

/** The default pins (src/integrations/compaction/pins.ts), read from AI SDK messages. */
export const defaultPins: PinClassifier = defaultPinsOf({
  text: textOf,
  toolCallIds,
  toolResultIds,
});

/**
 * Where the verbatim tail of the last `keep` messages starts, moved back until no tool result
 * in the tail answers a call before it (a provider rejects a result without its call).
 */
export function tailCutoff(messages: readonly ModelMessage[], keep: number): number {
  let cutoff = Math.max(0, messages.length - keep);
  const splits = (at: number) => {
    const called = new Set(messages.slice(0, at).flatMap(toolCallIds));
    return messages.slice(at).some((m) => toolResultIds(m).some((id) => called.has(id)));
  };
  while (cutoff > 0 && splits(cutoff)) cutoff--;
  return cutoff;
}

/** One JSON line of a message, lossless for its bytes (a Uint8Array as base64). */
export function transcriptLine(m: ModelMessage): string {
  return JSON.stringify(m, (_key, value: unknown) =>
    value instanceof Uint8Array
      ? { type: 'base64', data: Buffer.from(value).toString('base64') }
      : value,
  );
}
