/**
 * Roles and pins of LangChain messages (contract §3). The default pins: system instructions and
 * the user's explicit rules are CONSTRAINT, a tool call with no answer yet is OPEN_TOOL_CALL.
 */
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { Role } from '../../engine/events';
import type * as core from '../compaction/adapter';
import { defaultPinsOf, roleFor, type Speaker } from '../compaction/pins';

/** `messages`: the agent's current messages (to see, e.g., whether a tool call was answered). */
export type ClassifyContext = core.ClassifyContext<BaseMessage>;
/** What a summary must re-assert of one message. */
export type PinClassifier = core.PinClassifier<BaseMessage>;
/** Counts a list of messages in tokens (the summarization's counter). */
export type TokenCounter = core.TokenCounter<BaseMessage>;

/** LangChain's message types by who speaks (any other type is the assistant's). */
const SPEAKERS: Partial<Record<string, Speaker>> = {
  system: 'system',
  developer: 'system',
  human: 'user',
  tool: 'tool',
};

export function roleOf(message: BaseMessage): Role {
  return roleFor(SPEAKERS[message.getType()] ?? 'assistant', toolCallIds(message).length > 0);
}

export function textOf(message: BaseMessage): string {
  const c = message.content;
  if (typeof c === 'string') return c;
  return c
    .map((part) =>
      typeof part === 'string'
        ? part
        : 'text' in part && typeof part.text === 'string'
          ? part.text
          : '',
    )
    .join('');
}

export function toolCallIds(message: BaseMessage): string[] {
  if (!AIMessage.isInstance(message)) return [];
  return (message.tool_calls ?? []).map((c) => c.id).filter((id): id is string => !!id);
}

export function toolResultIds(message: BaseMessage): string[] {
  return ToolMessage.isInstance(message) ? [message.tool_call_id] : [];
}

/** The default pins (src/integrations/compaction/pins.ts), read from LangChain messages. */
export const defaultPins: PinClassifier = defaultPinsOf({
  text: textOf,
  toolCallIds,
  toolResultIds,
});
