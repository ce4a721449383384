/**
 * The committed state of one partition's sessions, with the processing time of each (contract
 * §4 "Freeing memory"; docs/decisions.md 161). A restore keeps each session as the bytes of its
 * changelog record (`serializeState`'s output) and decodes it on the session's first event: a
 * restore is then about as fast as reading the changelog, and a session nobody touches costs its
 * serialized size instead of its object graph (see bench/README.md).
 *
 * Every session carries its stamp (`Stamp`): the wall-clock time a record last reached it, and,
 * once closed, the wall-clock time its SessionClosed was processed. The sweep (partition.ts)
 * frees by these stamps alone, never by event time, so it needs no decoding: the stamps are kept
 * in two maps in the order they were set (`seen` moves a session to its end on every commit,
 * `closed` holds closed sessions by close time), and `expired` reads each from the front until
 * the first that may stay. A restored record's stamp comes from its changelog headers
 * (changelogKeys.ts `stampHeaders`); a record written before them gets the restore time, and
 * whether it is closed is learned by decoding: `classify` decodes a bounded number of such
 * records per call (skipping bytes that do not decode: the session's own next event
 * dead-letters as STATE_UNREADABLE instead, and a sweep that threw would hold the partition).
 */
import { deserializeState } from '../engine/serialize';
import { cloneState, type SessionState } from '../engine/state';

type Entry = SessionState | Buffer;

/** A session's processing times (ms, the processor's wall clock). */
export interface Stamp {
  /** When a record last reached the session (its state was last committed). */
  seenAt: number;
  /** When its SessionClosed was processed; null: open. */
  closedSince: number | null;
}

/** The stamp of a session committed at `at` in `state`, after `previous` (closed since then stays so). */
export function stampAfter(
  state: SessionState,
  at: number,
  previousClosedSince: number | null | undefined,
): Stamp {
  const closedSince = state.closedAt === null ? null : (previousClosedSince ?? at);
  return { seenAt: at, closedSince };
}

/** The periods of the sweep (ms of processing time), each with its sweep delay. */
export interface ExpiryLimits {
  /** A closed session may go this long after its SessionClosed was processed. */
  closedMs: number;
  /** Any session may go this long after a record last reached it. */
  idleMs: number;
}

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
  /** seenAt by session, in the order set (oldest first, give or take a clock step back). */
  private readonly seen = new Map<string, number>();
  /** closedSince of the closed sessions, in the order set. */
  private readonly closed = new Map<string, number>();
  /** Restored sessions whose record had no stamp: whether they are closed is not known yet. */
  private readonly unclassified = new Set<string>();
  /** Where `classify` continues; null: from the start. */
  private cursor: Iterator<string> | null = null;
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
    this.seen.clear();
    this.closed.clear();
    this.unclassified.clear();
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
   * A restored session as its changelog bytes, with the stamp its record carried, or, for a
   * record written without one, `restoredAt` as seenAt and closed or not learned by decoding
   * (`classify`, `closedSince`). The bytes are copied: a fetched record's value is a view into
   * the whole fetch response, which it would otherwise keep alive.
   */
  setSerialized(sessionId: string, bytes: Buffer, stamp: Stamp | number): void {
    const previous = this.map.get(sessionId);
    if (isBytes(previous)) this.serialized--;
    this.map.set(sessionId, Buffer.from(bytes));
    this.serialized++;
    if (typeof stamp === 'number') {
      this.stamp(sessionId, { seenAt: stamp, closedSince: null });
      this.unclassified.add(sessionId);
    } else this.stamp(sessionId, stamp);
  }

  /**
   * A committed state with its stamp (default: committed now, `stampAfter`); the store keeps
   * `state` itself (the caller must not change it later).
   */
  set(sessionId: string, state: SessionState, stamp?: Stamp): void {
    const s = stamp ?? stampAfter(state, Date.now(), this.closedSince(sessionId) ?? undefined);
    if (isBytes(this.map.get(sessionId))) this.serialized--;
    this.map.set(sessionId, state);
    this.stamp(sessionId, s);
  }

  delete(sessionId: string): void {
    if (isBytes(this.map.get(sessionId))) this.serialized--;
    this.map.delete(sessionId);
    this.seen.delete(sessionId);
    this.closed.delete(sessionId);
    this.unclassified.delete(sessionId);
  }

  private stamp(sessionId: string, s: Stamp): void {
    this.unclassified.delete(sessionId);
    // Deleted first: a Map keeps the first insertion's place, and `expired` relies on the order.
    this.seen.delete(sessionId);
    this.seen.set(sessionId, s.seenAt);
    if (s.closedSince === null) this.closed.delete(sessionId);
    else if (this.closed.get(sessionId) !== s.closedSince) {
      this.closed.delete(sessionId);
      this.closed.set(sessionId, s.closedSince);
    }
  }

  /** The committed stamp; undefined for a session not held. */
  stampOf(sessionId: string): Stamp | undefined {
    const seenAt = this.seen.get(sessionId);
    if (seenAt === undefined) return undefined;
    return { seenAt, closedSince: this.closedSince(sessionId) };
  }

  /**
   * When the session's SessionClosed was processed (null: open or not held); for a restored
   * record without a stamp, decoded now: closed ones count as closed since the restore.
   */
  closedSince(sessionId: string): number | null {
    if (this.unclassified.has(sessionId)) this.classifyOne(sessionId);
    return this.closed.get(sessionId) ?? null;
  }

  private classifyOne(sessionId: string): void {
    this.unclassified.delete(sessionId);
    const e = this.map.get(sessionId);
    const state = e === undefined ? null : isBytes(e) ? readable(e) : e;
    const seenAt = this.seen.get(sessionId);
    if (state?.closedAt != null && seenAt !== undefined) this.closed.set(sessionId, seenAt);
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

  /**
   * Up to `max` sessions the sweep may free at processing time `now`: closed ones whose
   * SessionClosed was processed more than `limits.closedMs` ago, then any whose last record
   * came more than `limits.idleMs` ago, each map read from its front (oldest first) to the
   * first that may stay. A clock stepped back can leave an older stamp behind a newer one:
   * it is then freed later, never earlier.
   */
  expired(now: number, limits: ExpiryLimits, max: number): string[] {
    const out: string[] = [];
    for (const [id, at] of this.closed) {
      if (out.length >= max || now - at <= limits.closedMs) break;
      out.push(id);
    }
    const chosen = new Set(out);
    for (const [id, at] of this.seen) {
      if (out.length >= max || now - at <= limits.idleMs) break;
      if (!chosen.has(id)) out.push(id);
    }
    return out;
  }

  /**
   * Learns, for up to `budget` restored records written without a stamp, whether they are
   * closed (decoding them; bytes that do not decode count as open), continuing where the last
   * call stopped. Returns how many were decoded.
   */
  classify(budget: number): number {
    let n = 0;
    while (this.unclassified.size > 0 && n < budget) {
      const next = (this.cursor ??= this.unclassified.values()).next();
      if (next.done) {
        this.cursor = null;
        continue;
      }
      n++;
      this.classifyOne(next.value);
    }
    return n;
  }
}
