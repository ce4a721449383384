/**
 * Per-session state of DESIGN §4. Two ways to own one: `evolve` treats states as values (it
 * changes a `cloneState` copy, so callers may keep and compare old states); `evolveInPlace`
 * changes a state its caller owns (the hot path: no allocation for an ordinary turn). Interval
 * sets inside are immutable values either way; the head, last turn and the remembered-id and
 * verdict lists are changed in place, which is why `cloneState` copies them.
 * Memory is O(pins + distinct ranges), never O(turns): turns only move heads and the last
 * turn's positions; remembered eventIds and requestIds are 53-bit hashes.
 */
import type { Policy, Span, Unit } from './events';
import type { Decision } from './outputs';
import { EMPTY, type IntervalSet } from './intervals';

/** How many eventIds (of the highest accepted seqs) a session remembers (DESIGN §4). */
export const REMEMBERED_EVENT_IDS = 32;
/** How many requestIds' verdicts a session keeps (DESIGN §4). */
export const STORED_VERDICTS = 16;

/** Sets kept per unit for a session without a policy (its U is not known yet). */
export type PerUnit = Partial<Record<Unit, IntervalSet>>;

export interface LastTurn {
  turn: number;
  tokens: Span;
  messages: Span;
}

/** The pending spill request (DESIGN §5, Action): the range asked for, in its unit. */
export interface PendingSpill {
  id: string;
  unit: Unit;
  start: number;
  end: number;
}

/**
 * A stored verdict, compact: the request's key and ranges, the decision, and the stamps that
 * a repetition re-emits unchanged. Its full text is rebuilt by deciding again: a repetition
 * is only answered from the store while `epoch` still equals the session's (no state change
 * since, DESIGN §5 "Repeated requestId"), and deciding is deterministic.
 */
export interface StoredVerdict {
  requestKey: number;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  decision: Decision;
  inputSeq: number;
  requestedAt: number;
  decidedAt: number;
  epoch: number;
}

export interface SessionState {
  policy: Policy | null;
  /** -1 before the first event. */
  lastSeq: number;
  /** Hg: none (null) until a gap is seen. */
  gapHead: number | null;
  /** The head in each unit: the end of the last appended turn (max over turns). */
  head: Record<Unit, number>;
  lastTurn: LastTurn | null;
  /** V: the verbatim start. */
  verbatimStart: number;
  /** Ranges in U. */
  pins: IntervalSet;
  truncated: IntervalSet;
  summary: IntervalSet;
  /** A0: permanently written-off positions. */
  ackPermanent: IntervalSet;
  /** P, A1 and X: in U with a policy (only the key U is used); per unit without one. */
  spilled: PerUnit;
  ackOnce: PerUnit;
  unspillable: PerUnit;
  spillFailed: boolean;
  pendingSpill: PendingSpill | null;
  /** Seqs and eventId hashes of the highest accepted seqs, ascending, at most 32. */
  recentSeqs: number[];
  recentIds: number[];
  /** Stored verdicts, least recently requested first, at most 16. */
  verdicts: StoredVerdict[];
  /** Bumped by every accepted event other than a request, and by every gap. */
  epoch: number;
  /** occurredAt of the SessionClosed, if any. */
  closedAt: number | null;
}

export function emptyState(): SessionState {
  return {
    policy: null,
    lastSeq: -1,
    gapHead: null,
    head: { TURNS: 0, TOKENS: 0, MESSAGES: 0 },
    lastTurn: null,
    verbatimStart: 0,
    pins: EMPTY,
    truncated: EMPTY,
    summary: EMPTY,
    ackPermanent: EMPTY,
    spilled: {},
    ackOnce: {},
    unspillable: {},
    spillFailed: false,
    pendingSpill: null,
    recentSeqs: [],
    recentIds: [],
    verdicts: [],
    epoch: 0,
    closedAt: null,
  };
}

/** A copy its new owner may change in place (everything mutable is copied). */
export function cloneState(s: SessionState): SessionState {
  return {
    ...s,
    head: { TURNS: s.head.TURNS, TOKENS: s.head.TOKENS, MESSAGES: s.head.MESSAGES },
    lastTurn: s.lastTurn && { ...s.lastTurn },
    recentSeqs: s.recentSeqs.slice(),
    recentIds: s.recentIds.slice(),
    verdicts: s.verdicts.slice(),
  };
}

export function unitOf(s: SessionState): Unit | null {
  return s.policy ? s.policy.floor.unit : null;
}

/** H: the head in U. */
export function headIn(s: SessionState, unit: Unit): number {
  return s.head[unit];
}

/** H' = max(H, Hg): the known head (DESIGN §2). */
export function knownHead(s: SessionState, unit: Unit): number {
  const h = s.head[unit];
  return s.gapHead !== null && s.gapHead > h ? s.gapHead : h;
}

export function inUnit(sets: PerUnit, unit: Unit): IntervalSet {
  return sets[unit] ?? EMPTY;
}

export function withUnit(sets: PerUnit, unit: Unit, value: IntervalSet): PerUnit {
  return { ...sets, [unit]: value };
}

/** A turn's range in a unit: `[turn, turn+1)` in TURNS (DESIGN §2). */
export function turnSpan(t: LastTurn, unit: Unit): Span {
  if (unit === 'TURNS') return { start: t.turn, end: t.turn + 1 };
  return unit === 'TOKENS' ? t.tokens : t.messages;
}
