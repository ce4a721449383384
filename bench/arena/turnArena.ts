/**
 * The fields an ordinary turn reads and writes, for every session of an `OwnedFleet`, in two
 * fleet-wide typed arrays indexed by slot: one 128-byte record per session and one 512-byte
 * eventId ring per session.
 *
 * Why: with 20,000 sessions the state objects are spread over ~40 MB of heap, and an ordinary
 * turn paid for cache and TLB misses on the state object and its ring array, not for the few
 * dozen instructions it runs (bench/README.md, "Where the time goes"). Here every session's hot
 * record lies in one compact array.
 *
 * A slot is either *hot* (the arena holds the current values of those fields; the state
 * object's copies are stale) or *cold* (the state object is the truth). `flush` makes it cold,
 * `load` makes it hot again when the session can take the fast path. The rules never see the
 * arena: `OwnedFleet` flushes a session before any other step and before handing it out.
 */
import type { TurnAppended } from '../../src/engine/events';
import { hash53 } from '../../src/engine/hash';
import { REMEMBERED_EVENT_IDS, type SessionState } from '../../src/engine/state';

/** Numbers per ring: `[seq, hash]` × 32, the same layout as `SessionState.recent`. */
const RING = 2 * REMEMBERED_EVENT_IDS;
const STRIDE = 16;

// Offsets in a session's record.
const HOT = 0;
const LAST_SEQ = 1;
const LAST_TURN = 2;
const LAST_TOKENS_END = 3;
const LAST_MESSAGES_END = 4;
const RING_LENGTH = 5;
const RING_NEXT = 6;
const EPOCH = 7;
const HEAD_TURNS = 8;
const HEAD_TOKENS = 9;
const HEAD_MESSAGES = 10;
const LAST_TOKENS_START = 11;
const LAST_MESSAGES_START = 12;
/** lastEventAt (contract §4); NaN for none. */
const LAST_EVENT_AT = 13;

/**
 * Slots per page. The arena grows a page at a time and never copies: growing one big array by
 * doubling cost a fresh 20,000-session fleet ~80 ms of copying and zeroing, and left up to half
 * of it unused.
 */
const PAGE_BITS = 10;
const PAGE_SLOTS = 1 << PAGE_BITS;
const IN_PAGE = PAGE_SLOTS - 1;

export class TurnArena {
  private readonly recordPages: Float64Array[] = [];
  private readonly ringPages: Float64Array[] = [];

  /** Bytes held by the pages (typed arrays, outside the JS heap). */
  get bytes(): number {
    return this.recordPages.length * PAGE_SLOTS * (STRIDE + RING) * 8;
  }

  /** Room for slots 0 … slots − 1 (new slots are cold). */
  reserve(slots: number): void {
    while (this.recordPages.length * PAGE_SLOTS < slots) {
      this.recordPages.push(new Float64Array(PAGE_SLOTS * STRIDE));
      this.ringPages.push(new Float64Array(PAGE_SLOTS * RING));
    }
  }

  isHot(slot: number): boolean {
    return this.recordPages[slot >> PAGE_BITS]![(slot & IN_PAGE) * STRIDE + HOT] === 1;
  }

  /** Forgets a slot's values without writing them anywhere (the session is gone). */
  drop(slot: number): void {
    this.recordPages[slot >> PAGE_BITS]![(slot & IN_PAGE) * STRIDE + HOT] = 0;
  }

  /**
   * Makes the slot hot if the state could take the fast path at all: a known session (its
   * floor unit is set by SessionOpened) that is not closed. Anything else stays cold.
   */
  load(slot: number, s: SessionState): void {
    const r = this.recordPages[slot >> PAGE_BITS]!;
    const b = (slot & IN_PAGE) * STRIDE;
    if (s.unit === null || s.closedAt !== null) {
      r[b + HOT] = 0;
      return;
    }
    r[b + HOT] = 1;
    r[b + LAST_SEQ] = s.lastSeq;
    r[b + LAST_TURN] = s.lastTurn;
    r[b + LAST_TOKENS_START] = s.lastTokensStart;
    r[b + LAST_TOKENS_END] = s.lastTokensEnd;
    r[b + LAST_MESSAGES_START] = s.lastMessagesStart;
    r[b + LAST_MESSAGES_END] = s.lastMessagesEnd;
    r[b + EPOCH] = s.epoch;
    r[b + HEAD_TURNS] = s.headTurns;
    r[b + HEAD_TOKENS] = s.headTokens;
    r[b + HEAD_MESSAGES] = s.headMessages;
    r[b + RING_NEXT] = s.recentNext;
    r[b + LAST_EVENT_AT] = s.lastEventAt ?? NaN;
    const recent = s.recent;
    r[b + RING_LENGTH] = recent.length;
    const ring = this.ringPages[slot >> PAGE_BITS]!;
    const at = (slot & IN_PAGE) * RING;
    for (let i = 0; i < recent.length; i++) ring[at + i] = recent[i]!;
  }

  /** Writes a hot slot's values back into its state and makes it cold (no-op when cold). */
  flush(slot: number, s: SessionState): void {
    const r = this.recordPages[slot >> PAGE_BITS]!;
    const b = (slot & IN_PAGE) * STRIDE;
    if (r[b + HOT] !== 1) return;
    r[b + HOT] = 0;
    s.lastSeq = r[b + LAST_SEQ]!;
    s.lastTurn = r[b + LAST_TURN]!;
    s.lastTokensStart = r[b + LAST_TOKENS_START]!;
    s.lastTokensEnd = r[b + LAST_TOKENS_END]!;
    s.lastMessagesStart = r[b + LAST_MESSAGES_START]!;
    s.lastMessagesEnd = r[b + LAST_MESSAGES_END]!;
    s.epoch = r[b + EPOCH]!;
    s.headTurns = r[b + HEAD_TURNS]!;
    s.headTokens = r[b + HEAD_TOKENS]!;
    s.headMessages = r[b + HEAD_MESSAGES]!;
    s.recentNext = r[b + RING_NEXT]!;
    const lastEventAt = r[b + LAST_EVENT_AT]!;
    s.lastEventAt = Number.isNaN(lastEventAt) ? null : lastEventAt;
    const length = r[b + RING_LENGTH]!;
    const rings = this.ringPages[slot >> PAGE_BITS]!;
    const from = (slot & IN_PAGE) * RING;
    const recent = s.recent;
    // The ring only grows while hot (appends until full); existing slots are overwritten.
    const kept = recent.length;
    for (let i = 0; i < kept; i++) recent[i] = rings[from + i]!;
    if (kept === length) return;
    for (let i = kept; i < length; i++) recent.push(rings[from + i]!);
    // Full for good: an exact-size copy, as `rememberEventId` leaves it (no spare capacity).
    if (length === RING) s.recent = recent.slice();
  }

  /**
   * An in-order, continuous turn of an open known session on a hot slot (the case of
   * `appendedInOrder` in evolve.ts, pinned or not). Steps 1–2 of contract §4 accept it as `next`
   * and remember its eventId; the turn moves the heads and the last turn (contract §4,
   * TurnAppended); nothing is published. The pins are the state's: for a pinned turn the
   * caller adds its span (`pinTurn`). Returns false, changing nothing, for any other turn or a
   * cold slot: the caller flushes and takes the general path.
   */
  appendInOrder(slot: number, e: TurnAppended, idleMs: number): boolean {
    const r = this.recordPages[slot >> PAGE_BITS]!;
    const b = (slot & IN_PAGE) * STRIDE;
    if (r[b + HOT] !== 1 || e.seq !== r[b + LAST_SEQ]! + 1) return false;
    // Past the idle period the state is dropped first (contract §4): the general path.
    const lastEventAt = r[b + LAST_EVENT_AT]!;
    if (e.occurredAt - lastEventAt > idleMs) return false;
    const lastTurn = r[b + LAST_TURN]!;
    const continues =
      lastTurn >= 0
        ? e.turn === lastTurn + 1 &&
          e.tokens.start === r[b + LAST_TOKENS_END] &&
          e.messages.start === r[b + LAST_MESSAGES_END]
        : e.turn === 0 && e.tokens.start === 0 && e.messages.start === 0;
    if (!continues) return false;
    const ring = this.ringPages[slot >> PAGE_BITS]!;
    remember(r, b, ring, (slot & IN_PAGE) * RING, e.seq, hash53(e.eventId));
    r[b + LAST_SEQ] = e.seq;
    r[b + EPOCH]!++;
    if (e.turn + 1 > r[b + HEAD_TURNS]!) r[b + HEAD_TURNS] = e.turn + 1;
    if (e.tokens.end > r[b + HEAD_TOKENS]!) r[b + HEAD_TOKENS] = e.tokens.end;
    if (e.messages.end > r[b + HEAD_MESSAGES]!) r[b + HEAD_MESSAGES] = e.messages.end;
    r[b + LAST_TURN] = e.turn;
    r[b + LAST_TOKENS_START] = e.tokens.start;
    r[b + LAST_TOKENS_END] = e.tokens.end;
    r[b + LAST_MESSAGES_START] = e.messages.start;
    r[b + LAST_MESSAGES_END] = e.messages.end;
    if (!(e.occurredAt <= lastEventAt)) r[b + LAST_EVENT_AT] = e.occurredAt;
    return true;
  }
}

/** `rememberEventId` (sequence.ts) on the arena: append until full, then overwrite the oldest. */
function remember(
  r: Float64Array,
  b: number,
  ring: Float64Array,
  at: number,
  seq: number,
  idHash: number,
): void {
  const length = r[b + RING_LENGTH]!;
  if (length < RING) {
    ring[at + length] = seq;
    ring[at + length + 1] = idHash;
    r[b + RING_LENGTH] = length + 2;
    return;
  }
  const next = r[b + RING_NEXT]!;
  ring[at + next] = seq;
  ring[at + next + 1] = idHash;
  r[b + RING_NEXT] = next + 2 === RING ? 0 : next + 2;
}
