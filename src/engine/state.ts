/**
 * Per-session state of contract §4. Two ways to own one: `evolve` treats states as values (it
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

/** How many eventIds (of the highest accepted seqs) a session remembers (contract §4). */
export const REMEMBERED_EVENT_IDS = 32;
/** How many out-of-band eventIds a session remembers (contract §4 step 0). */
export const REMEMBERED_OUT_OF_BAND_IDS = 8;
/** How many requestIds' verdicts a session keeps (contract §4). */
export const STORED_VERDICTS = 16;

/** Sets kept per unit for a session without a policy (its U is not known yet). */
export type PerUnit = Partial<Record<Unit, IntervalSet>>;

/**
 * The empty per-unit sets, one shared frozen value: most sessions have no spill,
 * acknowledgement or unspillable range, and an empty object per field costs ~56 B each.
 */
export const NO_SETS: PerUnit = Object.freeze({}) as PerUnit;

/** No remembered out-of-band eventIds: one shared frozen value. */
export const NO_IDS: readonly number[] = Object.freeze([]) as readonly number[];

/** The pending spill request (contract §5, Action): the range asked for, in its unit. */
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
 * since, contract §5 "Repeated requestId"), and deciding is deterministic.
 */
export interface StoredVerdict {
  requestKey: number;
  unit: Unit;
  /** summaryInput's start and end, as numbers: the store keeps nothing of the event. */
  sIn: number;
  eIn: number;
  tailStart: number;
  decision: Decision;
  inputSeq: number;
  requestedAt: number;
  decidedAt: number;
  epoch: number;
}

export interface SessionState {
  // Hot fields first: an ordinary turn reads and writes only these (fewer cache lines).
  /** The floor unit U, kept beside the policy so the turn path reads no nested object. */
  unit: Unit | null;
  /** occurredAt of the SessionClosed, if any. */
  closedAt: number | null;
  /** -1 before the first event. */
  lastSeq: number;
  /** The last appended turn, -1 before the first; then its token and message ranges. */
  lastTurn: number;
  lastTokensEnd: number;
  lastMessagesEnd: number;
  /**
   * The remembered (seq, eventId hash) pairs of the highest accepted seqs, at most 32, as one
   * flat array `[seq, hash, seq, hash, ...]`: appended in ascending seq order until full, then
   * a ring whose oldest pair is at `recentNext` (see sequence.ts). One array instead of two
   * shifted lists: an ordinary turn writes two slots and allocates nothing.
   */
  recent: number[];
  recentNext: number;
  /**
   * The eventId hashes of the last 8 out-of-band events accepted, oldest first (first in,
   * first out; a redelivery does not refresh its place). Never re-based (contract §4 step 0).
   * An immutable value, replaced on change: most sessions never see one, and share `NO_IDS`.
   */
  outOfBandIds: readonly number[];
  /** Bumped by every accepted event other than a request, and by every gap. */
  epoch: number;
  /** The head in each unit: the end of the last appended turn (max over turns). */
  headTurns: number;
  headTokens: number;
  headMessages: number;
  lastTokensStart: number;
  lastMessagesStart: number;
  /** Hg: none (null) until a gap is seen. */
  gapHead: number | null;
  policy: Policy | null;
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
  /** Stored verdicts, least recently requested first, at most 16. */
  verdicts: StoredVerdict[];
  /**
   * The greatest occurredAt of the events that advanced the session (contract §4), null
   * before the first: the idle period is measured from it, and a signature must not expire
   * before it. Only the session's own next seq or an authorized out-of-band event moves it, so
   * a record at a gap seq or an unsigned one, stamped far ahead, can neither drop the session
   * nor expire its signed answers (evolve-rev12.test.ts, findings 1 and 6).
   */
  lastEventAt: number | null;
  /**
   * F, the evidence head (contract §4): what a dropped state knew, per unit, handed to the
   * unknown state that replaces it; null when none. Discarded when a policy arrives.
   */
  evidenceHead: EvidenceHead | null;
  /**
   * E, the extent of an unknown session (contract §4): per unit, the greatest position
   * events that advanced it told of; null while none did. Its spills and acknowledgements are
   * clipped to [0, max(E, F)): a spill covers only positions known to exist. Unused once a
   * policy arrives.
   */
  extent: EvidenceHead | null;
  /** K (contract §4a): positions a coarsening changed; in U with a policy, per unit without. */
  coarsened: PerUnit;
  /** A SessionOpened arrived in conflict (contract §4): only a drop clears it. */
  contested: boolean;
}

/** F in every unit. */
export type EvidenceHead = Readonly<Record<Unit, number>>;

/** The largest position an event may name: 2^52 − 1 (contract §3, bounds). */
export const MAX_POSITION = 4_503_599_627_370_495;

export function emptyState(): SessionState {
  return {
    unit: null,
    closedAt: null,
    lastSeq: -1,
    lastTurn: -1,
    lastTokensEnd: 0,
    lastMessagesEnd: 0,
    recent: [],
    recentNext: 0,
    outOfBandIds: NO_IDS,
    epoch: 0,
    headTurns: 0,
    headTokens: 0,
    headMessages: 0,
    lastTokensStart: 0,
    lastMessagesStart: 0,
    gapHead: null,
    policy: null,
    verbatimStart: 0,
    pins: EMPTY,
    truncated: EMPTY,
    summary: EMPTY,
    ackPermanent: EMPTY,
    spilled: NO_SETS,
    ackOnce: NO_SETS,
    unspillable: NO_SETS,
    spillFailed: false,
    pendingSpill: null,
    verdicts: [],
    lastEventAt: null,
    evidenceHead: null,
    extent: null,
    coarsened: NO_SETS,
    contested: false,
  };
}

/**
 * The state of a session the processor refused at capacity and later gives state (issue of
 * bounded memory): its earlier events are gone, so it starts unknown with F at the largest
 * position in every unit, and only an acknowledgement (or a spill) of everything releases it.
 */
export function blindState(): SessionState {
  return {
    ...emptyState(),
    evidenceHead: { TURNS: MAX_POSITION, TOKENS: MAX_POSITION, MESSAGES: MAX_POSITION },
  };
}

/**
 * A copy its new owner may change in place (everything mutable is copied). Field by field
 * rather than a spread: one object shape, and no generic property copy on the hot path.
 */
export function cloneState(s: SessionState): SessionState {
  return {
    unit: s.unit,
    closedAt: s.closedAt,
    lastSeq: s.lastSeq,
    lastTurn: s.lastTurn,
    lastTokensEnd: s.lastTokensEnd,
    lastMessagesEnd: s.lastMessagesEnd,
    recent: s.recent.slice(),
    recentNext: s.recentNext,
    outOfBandIds: s.outOfBandIds,
    epoch: s.epoch,
    headTurns: s.headTurns,
    headTokens: s.headTokens,
    headMessages: s.headMessages,
    lastTokensStart: s.lastTokensStart,
    lastMessagesStart: s.lastMessagesStart,
    gapHead: s.gapHead,
    policy: s.policy,
    verbatimStart: s.verbatimStart,
    pins: s.pins,
    truncated: s.truncated,
    summary: s.summary,
    ackPermanent: s.ackPermanent,
    spilled: s.spilled,
    ackOnce: s.ackOnce,
    unspillable: s.unspillable,
    spillFailed: s.spillFailed,
    pendingSpill: s.pendingSpill,
    verdicts: s.verdicts.slice(),
    lastEventAt: s.lastEventAt,
    evidenceHead: s.evidenceHead,
    extent: s.extent,
    coarsened: s.coarsened,
    contested: s.contested,
  };
}

/** H: the head in U. */
export function headIn(s: SessionState, unit: Unit): number {
  return unit === 'TURNS' ? s.headTurns : unit === 'TOKENS' ? s.headTokens : s.headMessages;
}

/** The heads in every unit, for views and tests. */
export function heads(s: SessionState): Record<Unit, number> {
  return { TURNS: s.headTurns, TOKENS: s.headTokens, MESSAGES: s.headMessages };
}

/** H' = max(H, Hg): the known head (contract §2). */
export function knownHead(s: SessionState, unit: Unit): number {
  const h = headIn(s, unit);
  return s.gapHead !== null && s.gapHead > h ? s.gapHead : h;
}

export function inUnit(sets: PerUnit, unit: Unit): IntervalSet {
  return sets[unit] ?? EMPTY;
}

export function withUnit(sets: PerUnit, unit: Unit, value: IntervalSet): PerUnit {
  return { ...sets, [unit]: value };
}

/** A turn's range in a unit: `[turn, turn+1)` in TURNS (contract §2). */
export function turnSpan(t: { turn: number; tokens: Span; messages: Span }, unit: Unit): Span {
  if (unit === 'TURNS') return { start: t.turn, end: t.turn + 1 };
  return unit === 'TOKENS' ? t.tokens : t.messages;
}

/** Where the last appended turn ends in a unit (0 before the first turn). */
export function lastTurnEnd(s: SessionState, unit: Unit): number {
  if (s.lastTurn < 0) return 0;
  if (unit === 'TURNS') return s.lastTurn + 1;
  return unit === 'TOKENS' ? s.lastTokensEnd : s.lastMessagesEnd;
}
