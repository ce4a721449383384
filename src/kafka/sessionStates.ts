/**
 * The committed state of one partition's sessions. A restore keeps each session as the bytes
 * of its changelog record (`serializeState`'s output) and decodes it on the session's first
 * event: a restore is then about as fast as reading the changelog, and a session nobody
 * touches costs its serialized size instead of its object graph (see bench/README.md).
 *
 * The sweep of expired sessions (partition.ts) needs `closedAt` and `lastEventAt`, which only
 * decoding reveals: `classify` decodes a bounded number of the kept byte strings per call, turns
 * the closed and expired ones into ordinary (decoded) entries and leaves the others as bytes. It
 * goes round and round (an open session becomes idle later), and skips bytes that do not decode
 * (a session's own next event dead-letters as STATE_UNREADABLE instead: a sweep that threw would
 * hold the partition).
 */
import { deserializeState } from '../engine/serialize';
import { cloneState, type SessionState } from '../engine/state';

type Entry = SessionState | Buffer;

function readable(bytes: Buffer): SessionState | null {
  try {
    return deserializeState(bytes);
  } catch {
    return null;
  }
}

const isBytes = (e: Entry | undefined): e is Buffer => e instanceof Buffer;

export class SessionStates {
  private readonly map = new Map<string, Entry>();
  /** Where `classify` continues; null: from the start. */
  private cursor: Iterator<[string, Entry]> | null = null;
  private serialized = 0;

  get size(): number {
    return this.map.size;
  }

  /** Sessions still kept as bytes (never touched since the restore). */
  get serializedCount(): number {
    return this.serialized;
  }

  clear(): void {
    this.map.clear();
    this.cursor = null;
    this.serialized = 0;
  }

  sessionIds(): IterableIterator<string> {
    return this.map.keys();
  }

  has(sessionId: string): boolean {
    return this.map.has(sessionId);
  }

  /**
   * A restored session as its changelog bytes. They are copied: a fetched record's value is a
   * view into the whole fetch response, which it would otherwise keep alive.
   */
  setSerialized(sessionId: string, bytes: Buffer): void {
    const previous = this.map.get(sessionId);
    if (isBytes(previous)) this.serialized--;
    this.map.set(sessionId, Buffer.from(bytes));
    this.serialized++;
  }

  /** A committed state; the store keeps `state` itself (the caller must not change it later). */
  set(sessionId: string, state: SessionState): void {
    if (isBytes(this.map.get(sessionId))) this.serialized--;
    this.map.set(sessionId, state);
  }

  delete(sessionId: string): void {
    if (isBytes(this.map.get(sessionId))) this.serialized--;
    this.map.delete(sessionId);
  }

  /**
   * A copy of the committed state the caller owns and may change in place: decoded from the
   * kept bytes (the store keeps the bytes until `set`), or a copy of the decoded state.
   */
  owned(sessionId: string): SessionState | undefined {
    const e = this.map.get(sessionId);
    if (e === undefined) return undefined;
    return isBytes(e) ? deserializeState(e) : cloneState(e);
  }

  /** The committed state, read-only; decoded on every call for a session kept as bytes. */
  peek(sessionId: string): SessionState | undefined {
    const e = this.map.get(sessionId);
    return isBytes(e) ? deserializeState(e) : e;
  }

  /** Decoded states only (sessions touched since the restore, or classified as closed). */
  *decoded(): IterableIterator<[string, SessionState]> {
    for (const [id, e] of this.map) if (!isBytes(e)) yield [id, e];
  }

  /**
   * Decodes up to `budget` of the sessions still kept as bytes, in map order, continuing where
   * the last call stopped (a call that reaches the end stops there; the next starts a new round:
   * an open session may have become idle since); a closed one, or one
   * `expired` says may go, is kept decoded from then on (so the sweep sees it), any other stays
   * bytes. Returns how many were decoded.
   */
  classify(budget: number, expired: (s: SessionState) => boolean = () => false): number {
    let n = 0;
    while (this.serialized > 0 && n < budget) {
      const next = (this.cursor ??= this.map.entries()).next();
      if (next.done) {
        this.cursor = null; // the next call starts a new round
        break;
      }
      const [id, e] = next.value;
      if (!isBytes(e)) continue;
      n++;
      const state = readable(e);
      if (state !== null && (state.closedAt !== null || expired(state))) this.set(id, state);
    }
    return n;
  }
}
