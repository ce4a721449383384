/**
 * What the shared core needs to know of a framework's messages: everything else (following a
 * context, offering a summary, putting pinned messages back, counting) is written once, in this
 * folder. An integration is its adapter plus the hook its framework calls.
 */
import type { Pin, Role } from '../../engine/events';

/** Counts a list of messages in tokens, as the orchestrator counts its context. */
export type TokenCounter<M> = (messages: M[]) => number | Promise<number>;

export interface ClassifyContext<M> {
  role: Role;
  /** The message's index in the messages being followed. */
  index: number;
  /** The messages being followed (to see, e.g., whether a tool call was answered). */
  messages: readonly M[];
}

/** What a summary must re-assert of one message. */
export type PinClassifier<M> = (message: M, context: ClassifyContext<M>) => Pin[];

/**
 * How a conversation tells, on each call, which messages it followed already:
 * - `by-key`: a message keeps its key (an id) across calls; any unknown key is new.
 * - `by-place`: messages carry no ids, so each call's messages must begin with those last seen
 *   or returned (the same objects, or equal transcript lines); whatever follows them is new.
 */
export type Identity = 'by-key' | 'by-place';

/** One framework's message type, as the core reads and writes it. */
export interface MessageAdapter<M, K> {
  identity: Identity;
  /** The key a message is followed under (its id, assigned when missing; or the object). */
  key(m: M): K;
  /** The contract role of a message. */
  role(m: M): Role;
  /** Its text parts, joined: what the default pins read for rule words. */
  text(m: M): string;
  /** The ids of the tool calls it makes (an assistant message). */
  toolCallIds(m: M): string[];
  /** The ids of the tool calls it answers (a tool message). */
  toolResultIds(m: M): string[];
  /** One JSON line of the message, lossless, for spills. */
  transcriptLine(m: M): string;
  /** The message exactly as it is, as a new message (a copy is a new turn). */
  copy(m: M): M;
  /** A message holding only `text`: to count a summary's text as messages are counted. */
  textMessage(text: string): M;
}

/** A message's size as a turn: at least one token. */
export async function turnTokens<M>(count: TokenCounter<M>, m: M): Promise<number> {
  return Math.max(1, Math.ceil(await count([m])));
}
