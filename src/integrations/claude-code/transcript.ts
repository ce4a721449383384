/**
 * A Claude Code transcript (`transcript_path`: JSON lines, appended to by Claude Code), read
 * incrementally and classified line by line. Pure: bytes in, entries out.
 *
 * What a line is (decision 222, from transcripts of Claude Code 2.1.337):
 * - a **turn**: a line the model is shown. A `user` or `assistant` line with a `message` (USER,
 *   or TOOL_RESULT when it carries `tool_result` blocks; ASSISTANT, or TOOL_CALL when it carries
 *   `tool_use` blocks), and an `attachment` line with `rendered` content (SYSTEM: the
 *   environment, CLAUDE.md and memory, hook output, reminders), since Claude Code renders those
 *   into the request. Side chains (`isSidechain`: a subagent's own thread) are not the session's
 *   context.
 * - the **compact boundary**: `system` with subtype `compact_boundary`, naming the messages
 *   Claude Code kept verbatim (`compactMetadata.preservedMessages.uuids`);
 * - the **compact summary**: the `user` line with `isCompactSummary` (the summary itself, not a
 *   turn: it stands for the turns it replaced);
 * - **other**: bookkeeping (`api-request*`, `queue-operation`, `cost-state`, `last-prompt`,
 *   `mode`, `tools-used`, ...) and attachments with nothing rendered;
 * - **cleared**: a `user` line whose every block is a tool result Claude Code cleared from the
 *   context (content `[Old tool result content cleared]`, CLEARED_TOOL_RESULT): not a turn, but
 *   the turns that held those results were truncated;
 * - **unreadable**: a complete line that is not a JSON object (reported, never a turn).
 *
 * Tokens: an assistant line's `message.usage.output_tokens` (what the model wrote); every other
 * turn, and an assistant line without usage, is estimated at one token per 4 bytes of its
 * content's UTF-8 (at least 1).
 */
import type { Role } from '../../engine/events';

/** A complete line: `[start, end)` in the file, `end` just after its `\n`. */
export interface LineRange {
  start: number;
  end: number;
}

export interface TurnEntry extends LineRange {
  kind: 'turn';
  uuid: string | null;
  role: Role;
  tokens: number;
  /** The text a pin keeps verbatim: the message's text, or an attachment's file contents. */
  text: string;
  /** CLAUDE.md or memory content Claude Code attached (an `instructions`-like attachment). */
  memory: boolean;
  /** The ids of the tool calls it makes / answers. */
  toolUseIds: string[];
  toolResultIds: string[];
  /** The model's context size after this line, where its usage says so (assistant lines). */
  contextTokens: number | null;
}

export interface BoundaryEntry extends LineRange {
  kind: 'boundary';
  uuid: string | null;
  trigger: string | null;
  /** The messages Claude Code kept verbatim after the summary. */
  preservedUuids: string[];
}

export type TranscriptEntry =
  | TurnEntry
  | BoundaryEntry
  | (LineRange & { kind: 'summary'; uuid: string | null })
  | (LineRange & { kind: 'other' })
  | (LineRange & { kind: 'cleared'; toolResultIds: string[] })
  | (LineRange & { kind: 'unreadable'; error: string });

const NEWLINE = 0x0a;

/** What Claude Code 2.1.337 puts in place of a tool result it cleared from the context. */
export const CLEARED_TOOL_RESULT = '[Old tool result content cleared]';
const BYTES_PER_TOKEN = 4;

/**
 * The complete lines of `bytes` (the file's bytes from `offset` on), and where the next read
 * starts: a last line without its `\n` is not complete yet and waits for the next read.
 */
export function completeLines(
  bytes: Uint8Array,
  offset: number,
): { lines: LineRange[]; next: number } {
  const lines: LineRange[] = [];
  let start = 0;
  for (let i = bytes.indexOf(NEWLINE); i >= 0; i = bytes.indexOf(NEWLINE, i + 1)) {
    lines.push({ start: offset + start, end: offset + i + 1 });
    start = i + 1;
  }
  return { lines, next: offset + start };
}

/** The entries of the complete lines of `bytes` (the file from `offset` on), in file order. */
export function parseTranscript(
  bytes: Uint8Array,
  offset: number,
): { entries: TranscriptEntry[]; next: number } {
  const { lines, next } = completeLines(bytes, offset);
  const decoder = new TextDecoder();
  const entries = lines.map((r) =>
    classifyLine(decoder.decode(bytes.subarray(r.start - offset, r.end - offset)), r),
  );
  return { entries, next };
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** One complete line (with or without its `\n`) as an entry. */
export function classifyLine(line: string, range: LineRange): TranscriptEntry {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return { ...range, kind: 'unreadable', error: (e as Error).message };
  }
  if (!isObject(value)) return { ...range, kind: 'unreadable', error: 'not a JSON object' };
  try {
    return classifyValue(value, range);
  } catch (e) {
    // JSON.parse takes any depth, but walking the content (its text, its size) recurses: a line
    // nested deeper than the stack, from a tool's input or output, must neither crash the hook
    // (Claude Code would go on unguarded at every later call) nor vanish from the turns.
    if (!(e instanceof RangeError)) throw e;
    return tooDeepTurn(value, range, line);
  }
}

/**
 * A user or assistant line too deeply nested to walk: still a turn the model read, counted by
 * its size, with no text (so no pin) and no tool ids. Anything else is not a turn.
 */
function tooDeepTurn(value: Json, range: LineRange, line: string): TranscriptEntry {
  if ((value.type !== 'user' && value.type !== 'assistant') || value.isSidechain === true)
    return other(range);
  return {
    ...range,
    kind: 'turn',
    uuid: str(value.uuid),
    role: value.type === 'assistant' ? 'ASSISTANT' : 'USER',
    tokens: estimate(line),
    text: '',
    memory: false,
    toolUseIds: [],
    toolResultIds: [],
    contextTokens: null,
  };
}

function classifyValue(value: Json, range: LineRange): TranscriptEntry {
  if (value.isSidechain === true) return { ...range, kind: 'other' };
  const uuid = str(value.uuid);
  switch (value.type) {
    case 'user':
    case 'assistant':
      if (value.isCompactSummary === true) return { ...range, kind: 'summary', uuid };
      if (!isObject(value.message)) return other(range);
      return clearedResults(value.message, range) ?? messageTurn(value, value.message, range, uuid);
    case 'attachment':
      return attachmentTurn(value, range, uuid) ?? other(range);
    case 'system':
      return value.subtype === 'compact_boundary' ? boundary(value, range, uuid) : other(range);
    default:
      return other(range);
  }
}

function other(range: LineRange): TranscriptEntry {
  return { ...range, kind: 'other' };
}

function blocksOf(message: Json): Json[] {
  return Array.isArray(message.content) ? message.content.filter(isObject) : [];
}

/** The text of a message's content: the string, or its text blocks and tool results. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((b) => str(b.text) ?? (b.type === 'tool_result' ? contentText(b.content) : ''))
    .filter((t) => t.length > 0)
    .join('\n');
}

/** A line whose blocks are all cleared tool results (a line with anything else is a turn). */
function clearedResults(message: Json, range: LineRange): TranscriptEntry | null {
  const blocks = blocksOf(message);
  const cleared = (b: Json) =>
    b.type === 'tool_result' && contentText(b.content) === CLEARED_TOOL_RESULT;
  if (blocks.length === 0 || !blocks.every(cleared)) return null;
  return {
    ...range,
    kind: 'cleared',
    toolResultIds: blocks.flatMap((b) => str(b.tool_use_id) ?? []),
  };
}

function estimate(text: string): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN));
}

function messageTurn(line: Json, message: Json, range: LineRange, uuid: string | null): TurnEntry {
  const blocks = blocksOf(message);
  const toolUseIds = blocks.filter((b) => b.type === 'tool_use').flatMap((b) => str(b.id) ?? []);
  const toolResultIds = blocks
    .filter((b) => b.type === 'tool_result')
    .flatMap((b) => str(b.tool_use_id) ?? []);
  const assistant = line.type === 'assistant';
  const role: Role = assistant
    ? toolUseIds.length > 0
      ? 'TOOL_CALL'
      : 'ASSISTANT'
    : toolResultIds.length > 0
      ? 'TOOL_RESULT'
      : 'USER';
  const usage = isObject(message.usage) ? message.usage : null;
  const output = usage ? Number(usage.output_tokens) : NaN;
  return {
    ...range,
    kind: 'turn',
    uuid,
    role,
    tokens:
      assistant && Number.isSafeInteger(output) && output > 0
        ? output
        : estimate(JSON.stringify(message.content ?? '')),
    text: contentText(message.content),
    memory: false,
    toolUseIds,
    toolResultIds,
    contextTokens: usage ? contextTokens(usage) : null,
  };
}

/** What the model read and wrote in the call that produced this line. */
function contextTokens(usage: Json): number | null {
  const n = [
    'input_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
    'output_tokens',
  ]
    .map((k) => Number(usage[k] ?? 0))
    .reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  return n > 0 ? n : null;
}

/** Attachment types whose files are the user's standing instructions (CLAUDE.md, memory). */
const MEMORY_ATTACHMENTS = new Set(['instructions', 'nested_memory', 'memory', 'claude_md']);

function attachmentTurn(line: Json, range: LineRange, uuid: string | null): TurnEntry | null {
  const rendered = Array.isArray(line.rendered)
    ? line.rendered
        .filter(isObject)
        .map((r) => contentText(r.content))
        .join('\n')
    : '';
  if (rendered.length === 0) return null;
  const attachment = isObject(line.attachment) ? line.attachment : {};
  const memory = MEMORY_ATTACHMENTS.has(str(attachment.type) ?? '');
  const files = Array.isArray(attachment.files) ? attachment.files.filter(isObject) : [];
  const fileText = files.flatMap((f) => str(f.content) ?? []).join('\n\n');
  return {
    ...range,
    kind: 'turn',
    uuid,
    role: 'SYSTEM',
    tokens: estimate(rendered),
    text: memory && fileText.length > 0 ? fileText : rendered,
    memory,
    toolUseIds: [],
    toolResultIds: [],
    contextTokens: null,
  };
}

function boundary(line: Json, range: LineRange, uuid: string | null): BoundaryEntry {
  const meta = isObject(line.compactMetadata) ? line.compactMetadata : {};
  const preserved = isObject(meta.preservedMessages) ? meta.preservedMessages : {};
  const uuids = Array.isArray(preserved.uuids) ? preserved.uuids.flatMap((u) => str(u) ?? []) : [];
  return { ...range, kind: 'boundary', uuid, trigger: str(meta.trigger), preservedUuids: uuids };
}
