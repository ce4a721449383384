/**
 * The rules of contract §5, one small function each, in table order. A rule returns:
 * - `null` when it does not apply;
 * - `{ hole }` for a hole rule: it fires iff `hole − (P ∪ A)` is not empty;
 * - `{ healable }` for a rule without a hole: when healable it is healed iff
 *   `[0,t) ⊆ P ∪ A`; when not healable it always fires.
 */
import type { Unit } from './events';
import type { RuleCode } from './outputs';
import { type IntervalSet, clip, intersect, range, subtract, union } from './intervals';

export type RuleResult = { hole: IntervalSet } | { healable: boolean } | null;

/** What the rules read: the request against a known session (all ranges in U). */
export interface RuleContext {
  unit: Unit;
  requestUnit: Unit;
  truncatorUnit: Unit;
  /** H' */
  knownHead: number;
  /** Hg */
  gapHead: number | null;
  /** V */
  verbatimStart: number;
  /** f */
  floorSpan: number;
  sIn: number;
  eIn: number;
  /** t */
  tailStart: number;
  truncated: IntervalSet;
  pins: IntervalSet;
  /** I = [sIn,eIn) − (T − S): what the summarizer can have seen. */
  input: IntervalSet;
  /** U0 = ([0,t) ∪ (T ∩ [t,H'))) − I: positions leaving the verbatim window unaccounted. */
  uncovered: IntervalSet;
}

export function effectiveInput(
  sIn: number,
  eIn: number,
  truncated: IntervalSet,
  summary: IntervalSet,
): IntervalSet {
  return subtract(range(sIn, eIn), subtract(truncated, summary));
}

export function uncoveredSet(
  tailStart: number,
  knownHead: number,
  truncated: IntervalSet,
  input: IntervalSet,
): IntervalSet {
  const leaving = union(range(0, tailStart), clip(truncated, tailStart, knownHead));
  return subtract(leaving, input);
}

/** Events were lost: nothing below Hg can be proven. */
export function eventGap(c: RuleContext): RuleResult {
  return c.gapHead === null ? null : { hole: range(0, c.gapHead) };
}

/** Seed cond. 4: a floor the truncator cannot honor; a request in another unit is unplaceable. */
export function unitMismatch(c: RuleContext): RuleResult {
  if (c.requestUnit !== c.unit) return { healable: false };
  return c.truncatorUnit !== c.unit ? { healable: true } : null;
}

/** `0 ≤ sIn ≤ eIn ≤ H'` and `V ≤ t ≤ H'`, else the request names unknown or compacted positions. */
export function invalidRequest(c: RuleContext): RuleResult {
  const valid =
    c.sIn >= 0 &&
    c.sIn <= c.eIn &&
    c.eIn <= c.knownHead &&
    c.verbatimStart <= c.tailStart &&
    c.tailStart <= c.knownHead;
  return valid ? null : { healable: false };
}

/** Seed cond. 1: the summarizer must have seen `[t−f, t)`. */
export function floorNotInInput(c: RuleContext): RuleResult {
  return { hole: range(Math.max(0, c.tailStart - c.floorSpan), Math.min(c.sIn, c.tailStart)) };
}

/** The seed's truncation check, literally: any truncation inside `[t−f, t)`. */
export function truncationInFloor(c: RuleContext): RuleResult {
  return { hole: clip(c.truncated, Math.max(0, c.tailStart - c.floorSpan), c.tailStart) };
}

/** Seed cond. 3: the summary must be contiguous with the tail. */
export function seamHole(c: RuleContext): RuleResult {
  return { hole: range(c.eIn, c.tailStart) };
}

/** The f most recent units `[H'−f, H')` must stay verbatim after the compaction. */
export function tailBelowFloor(c: RuleContext): RuleResult {
  const floor = range(Math.max(0, c.knownHead - c.floorSpan), c.knownHead);
  return { hole: intersect(floor, union(range(0, c.tailStart), c.truncated)) };
}

/** Seed cond. 2: pinned content leaving the verbatim window that no summary accounts for. */
export function evictedPinned(c: RuleContext): RuleResult {
  return { hole: intersect(c.uncovered, c.pins) };
}

/** STRICT coverage: any content leaving the verbatim window unaccounted. */
export function evictedUncovered(c: RuleContext): RuleResult {
  return { hole: c.uncovered };
}

/** The rules after UNKNOWN_SESSION, in table order. */
export const KNOWN_SESSION_RULES: readonly {
  code: RuleCode;
  evaluate: (c: RuleContext) => RuleResult;
  /** Evaluation stops after this rule when it returns a result (contract §5). */
  stopsWhen: (c: RuleContext, r: RuleResult) => boolean;
}[] = [
  { code: 'EVENT_GAP', evaluate: eventGap, stopsWhen: () => false },
  { code: 'UNIT_MISMATCH', evaluate: unitMismatch, stopsWhen: (c) => c.requestUnit !== c.unit },
  { code: 'INVALID_REQUEST', evaluate: invalidRequest, stopsWhen: (_c, r) => r !== null },
  { code: 'FLOOR_NOT_IN_INPUT', evaluate: floorNotInInput, stopsWhen: () => false },
  { code: 'TRUNCATION_IN_FLOOR', evaluate: truncationInFloor, stopsWhen: () => false },
  { code: 'SEAM_HOLE', evaluate: seamHole, stopsWhen: () => false },
  { code: 'TAIL_BELOW_FLOOR', evaluate: tailBelowFloor, stopsWhen: () => false },
  { code: 'EVICTED_PINNED', evaluate: evictedPinned, stopsWhen: () => false },
  { code: 'EVICTED_UNCOVERED', evaluate: evictedUncovered, stopsWhen: () => false },
];

/** Every rule code in table order (contract §5). */
export const RULE_CODES: readonly RuleCode[] = [
  'UNKNOWN_SESSION',
  ...KNOWN_SESSION_RULES.map((r) => r.code),
];
