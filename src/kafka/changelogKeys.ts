/**
 * The changelog's keys: sessions' states, and control records beside them. A control key is a
 * NUL then a name. The contract does not forbid a NUL in a sessionId, so a session's key is its
 * sessionId with one more NUL in front when it starts with one (`stateKey`): a control key and
 * a session's key never meet, and every reader maps keys back with `sessionOfKey` (null: a
 * control record, not state).
 *
 * - The restore barrier (restore.ts): a nonce the new owner of a partition writes, to know where
 *   the stable end of the changelog is.
 * - The input position: the offset after the last input record the partition's committed state
 *   includes, written in every batch's transaction with that batch's changelog records. State and
 *   position are then read back from one log, up to one barrier, and agree by construction. The
 *   group's committed offset (written by the same transaction) can lag behind that: kafkajs 2.2.4
 *   fetches it with OffsetFetch v4, without KIP-447's require_stable, so right after a
 *   transaction coordinator or group coordinator failover it may answer the offset from before a
 *   committed transaction, and the batch would be processed twice (verdicts twice). Held by
 *   test/integration/cluster/cluster-faults.test.ts ("kill -9 of the transaction coordinator in
 *   the middle of transactions: exactly once", and the group coordinator's).
 * - The refused filter's chunks (capacity/refusedFilter.ts): the sessions the partition refused at
 *   capacity, written in the same transaction as the batch that refused them, so a restart or a
 *   new owner of the partition does not forget them (a forgotten one would get state as if it
 *   had no past).
 *
 * A session's record carries its processing-time stamp (sessionStates.ts `Stamp`) in headers,
 * beside the engine's serialized state: `cg.seen-at`, the wall-clock ms of the batch that wrote
 * it, and `cg.closed-since`, when its SessionClosed was processed (absent while open). A record
 * without `cg.seen-at` was written before stamps (docs/decisions.md 161).
 */
import type { Stamp } from './sessionStates';

const CONTROL_PREFIX = '\u0000';

export const BARRIER_KEY = `${CONTROL_PREFIX}restore-barrier`;

/** The key of the input position record of `inputTopic` (one per changelog partition). */
export function positionKey(inputTopic: string): string {
  return `${CONTROL_PREFIX}input-position\u0000${inputTopic}`;
}

const REFUSED_PREFIX = `${CONTROL_PREFIX}refused-at-capacity\u0000`;

/** The key of chunk `i` of the partition's refused filter. */
export function refusedChunkKey(i: number): string {
  return `${REFUSED_PREFIX}${i}`;
}

/** The chunk index a refused-filter key names, or null for any other key. */
export function refusedChunkOfKey(key: string): number | null {
  if (!key.startsWith(REFUSED_PREFIX)) return null;
  const i = key.slice(REFUSED_PREFIX.length);
  return /^(0|[1-9][0-9]{0,3})$/.test(i) ? Number(i) : null;
}

/** The changelog key of a session's state. */
export function stateKey(sessionId: string): string {
  return sessionId.startsWith(CONTROL_PREFIX) ? CONTROL_PREFIX + sessionId : sessionId;
}

/** The sessionId whose state a changelog key holds, or null for a control record. */
export function sessionOfKey(key: string): string | null {
  if (!key.startsWith(CONTROL_PREFIX)) return key;
  return key.startsWith(CONTROL_PREFIX, 1) ? key.slice(1) : null;
}

/** The position record's value: the next input offset, in decimal. */
export function encodePosition(nextOffset: string): string {
  return nextOffset;
}

/** The next input offset a position record holds, or null when its value is not one. */
export function decodePosition(value: Buffer | null): string | null {
  const text = value?.toString('utf8') ?? '';
  return /^(0|[1-9][0-9]{0,18})$/.test(text) ? text : null;
}

export const SEEN_AT_HEADER = 'cg.seen-at';
export const CLOSED_SINCE_HEADER = 'cg.closed-since';

/** A session record's headers for its stamp. */
export function stampHeaders(s: Stamp): Record<string, string> {
  return s.closedSince === null
    ? { [SEEN_AT_HEADER]: String(s.seenAt) }
    : { [SEEN_AT_HEADER]: String(s.seenAt), [CLOSED_SINCE_HEADER]: String(s.closedSince) };
}

type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined;

function millis(v: Buffer | string | (Buffer | string)[] | undefined): number | null {
  const one = Array.isArray(v) ? v[0] : v;
  const text = one === undefined ? '' : one.toString();
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * The stamp a session record's headers hold, or null for a record without one (written before
 * stamps, or with a value that is not one): the restore then stamps it with its own time.
 */
export function stampOfHeaders(headers: Headers): Stamp | null {
  const seenAt = millis(headers?.[SEEN_AT_HEADER]);
  if (seenAt === null) return null;
  const closed = headers?.[CLOSED_SINCE_HEADER];
  if (closed === undefined) return { seenAt, closedSince: null };
  const closedSince = millis(closed);
  return closedSince === null ? null : { seenAt, closedSince };
}
