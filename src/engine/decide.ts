/**
 * The decision of contract §5: evaluate the rules top-down, heal holes by spills and
 * acknowledgements, then choose basis (APPROVE) or action (REFUSE). Pure: the state is only
 * read, the clock (`decidedAt`) is passed in.
 */
import type { Unit } from './events';
import type { Action, Basis, RuleCode, SpillRequest, Verdict } from './outputs';
import {
  EMPTY,
  type IntervalSet,
  isEmpty,
  isSubset,
  meets,
  range,
  subtract,
  reportedSpans,
  union,
} from './intervals';
import {
  KNOWN_SESSION_RULES,
  type RuleContext,
  type RuleResult,
  effectiveInput,
  uncoveredSet,
} from './rules';
import { type SessionState, inUnit, knownHead } from './state';
import type { Evaluation, RequestInput } from './evaluation';
import { diagnosticFor, messageFor } from './messages';
import { evidenceIn } from './drop';

interface Healing {
  /** P ∪ A */
  recoverable: IntervalSet;
  /** P */
  spilled: IntervalSet;
  tailStart: number;
}

/**
 * The unhealed part of a rule's result, or null when it does not fire. A rule without a hole is
 * healed iff `[0, reach)` is recoverable: reach is t, or max(t, F) for UNKNOWN_SESSION (§5).
 */
function firesWith(result: RuleResult, heal: IntervalSet, reach: number): IntervalSet | null {
  if (result === null) return null;
  if ('hole' in result) {
    const left = subtract(result.hole, heal);
    return isEmpty(left) ? null : left;
  }
  const need = subtract(range(0, reach), heal);
  return !result.healable || !isEmpty(need) ? need : null;
}

function record(
  evaluation: Evaluation,
  code: RuleCode,
  result: RuleResult,
  healing: Healing,
  reach = healing.tailStart,
): void {
  evaluation.rulesChecked.push(code);
  const left = firesWith(result, healing.recoverable, reach);
  if (left !== null) {
    const holeless = result !== null && !('hole' in result);
    evaluation.fired.push({
      code,
      holes: holeless ? EMPTY : left,
      spillNeed: holeless ? left : EMPTY,
    });
  }
  if (firesWith(result, healing.spilled, reach) !== null) {
    evaluation.refusedWithoutAck = true;
  }
}

/** How far UNKNOWN_SESSION needs recoverable positions: max(t, F) in the request's unit. */
function unknownReach(s: SessionState, r: RequestInput): number {
  return Math.max(r.tailStart, evidenceIn(s, r.unit));
}

/** UNKNOWN_SESSION and INVALID_REQUEST only, in the request's unit (contract §5 table). */
function evaluateUnknown(s: SessionState, r: RequestInput): Evaluation {
  const spilled = inUnit(s.spilled, r.unit);
  const healing: Healing = {
    spilled,
    recoverable: union(spilled, inUnit(s.ackOnce, r.unit)),
    tailStart: r.tailStart,
  };
  const e: Evaluation = { rulesChecked: [], fired: [], refusedWithoutAck: false, holeUnit: r.unit };
  record(e, 'UNKNOWN_SESSION', { healable: true }, healing, unknownReach(s, r));
  const { start, end } = r.summaryInput;
  const valid = start >= 0 && start <= end && r.tailStart >= 0;
  record(e, 'INVALID_REQUEST', valid ? null : { healable: false }, healing);
  return e;
}

export function ruleContext(s: SessionState, r: RequestInput): RuleContext {
  const policy = s.policy!;
  const unit = policy.floor.unit;
  const hp = knownHead(s, unit);
  const input = effectiveInput(r.summaryInput.start, r.summaryInput.end, s.truncated, s.summary);
  return {
    unit,
    requestUnit: r.unit,
    truncatorUnit: policy.truncatorUnit,
    knownHead: hp,
    gapHead: s.gapHead,
    verbatimStart: s.verbatimStart,
    floorSpan: policy.floor.span,
    sIn: r.summaryInput.start,
    eIn: r.summaryInput.end,
    tailStart: r.tailStart,
    truncated: s.truncated,
    pins: s.pins,
    input,
    uncovered: uncoveredSet(r.tailStart, hp, s.truncated, input),
  };
}

function evaluateKnown(s: SessionState, r: RequestInput): Evaluation {
  const unit = s.policy!.floor.unit;
  const spilled = inUnit(s.spilled, unit);
  const healing: Healing = {
    spilled,
    recoverable: union(spilled, union(s.ackPermanent, inUnit(s.ackOnce, unit))),
    tailStart: r.tailStart,
  };
  const e: Evaluation = { rulesChecked: [], fired: [], refusedWithoutAck: false, holeUnit: unit };
  // A contested policy (§4): UNKNOWN_SESSION first, then every rule of a known session.
  const contested: RuleResult = s.contested ? { healable: true } : null;
  record(e, 'UNKNOWN_SESSION', contested, healing, unknownReach(s, r));
  const c = ruleContext(s, r);
  const pinnedOnly = s.policy!.coverage === 'PINNED';
  for (const rule of KNOWN_SESSION_RULES) {
    if (rule.code === 'EVICTED_UNCOVERED' && pinnedOnly) continue;
    const result = rule.evaluate(c);
    record(e, rule.code, result, healing);
    if (rule.stopsWhen(c, result)) break;
  }
  return e;
}

/** The rules' outcome for a request on a state (no verdict built, nothing stored). */
export function evaluate(s: SessionState, r: RequestInput): Evaluation {
  return s.policy ? evaluateKnown(s, r) : evaluateUnknown(s, r);
}

/** Is `[0, reach)` non-empty and spilled? */
function spilledUpTo(spilled: IntervalSet, reach: number): boolean {
  return reach > 0 && isSubset(range(0, reach), spilled);
}

function basisOf(s: SessionState, r: RequestInput, e: Evaluation): Basis {
  if (e.refusedWithoutAck) return 'LOSS_ACKNOWLEDGED';
  const spilled = inUnit(s.spilled, e.holeUnit);
  if (spilledUpTo(spilled, r.tailStart)) return 'LOSSLESS_SPILL';
  // An unknown session with F: what reaches F is spilled too (§5, Basis).
  if (!s.policy && s.evidenceHead !== null && spilledUpTo(spilled, unknownReach(s, r))) {
    return 'LOSSLESS_SPILL';
  }
  return 'INVARIANT_HOLDS';
}

/** Why a spill cannot heal this refusal, or null when it can (contract §5, Action). */
export function haltCause(s: SessionState, r: RequestInput, e: Evaluation): string | null {
  const spillMode = s.policy ? s.policy.spill : 'ENABLED';
  if (e.fired.some((f) => f.code === 'INVALID_REQUEST')) {
    return 'the request is invalid: send a corrected request';
  }
  if (s.policy && r.unit !== s.policy.floor.unit) {
    return `the request is in ${r.unit} but the floor is in ${s.policy.floor.unit}: send a corrected request`;
  }
  if (spillMode === 'DISABLED') {
    return 'spills are disabled by the session policy: acknowledge the loss (LossAcknowledged) to proceed';
  }
  if (s.spillFailed) {
    return 'the last spill failed: complete a spill or acknowledge the loss (LossAcknowledged)';
  }
  const unspillable = inUnit(s.unspillable, e.holeUnit);
  const blocked = e.fired.some(
    (f) => meets(f.holes, unspillable) || meets(f.spillNeed, unspillable),
  );
  if (blocked) {
    return 'a hole lies where an earlier spill could not store content: acknowledge the loss (LossAcknowledged)';
  }
  return null;
}

export function spillRequestId(sessionId: string, requestId: string, inputSeq: number): string {
  return `${sessionId}:${requestId}:${inputSeq}`;
}

/** The range a spill must store: `[0,H')` in U, or `[0, max(eIn,t,F))` in ru when unknown. */
export function spillRange(
  s: SessionState,
  r: RequestInput,
): { unit: Unit; start: number; end: number } {
  if (s.policy) {
    const unit = s.policy.floor.unit;
    return { unit, start: 0, end: knownHead(s, unit) };
  }
  const end = Math.max(r.summaryInput.end, unknownReach(s, r));
  return { unit: r.unit, start: 0, end };
}

export interface DecisionStamps {
  sessionId: string;
  decidedAt: number;
  engineVersion: string;
}

export interface Decided {
  verdict: Verdict;
  spillRequest: SpillRequest | null;
}

/** contract §5: the verdict (and, on REFUSE with SPILL, the spill request) for a request. */
export function decide(s: SessionState, r: RequestInput, stamps: DecisionStamps): Decided {
  const e = evaluate(s, r);
  const unit = e.holeUnit;
  const reasons = e.fired.map((f) => ({
    code: f.code,
    message: messageFor(f, r, s, unit),
    holes: reportedSpans(f.holes).map((h) => ({ unit, ...h })),
  }));
  const refused = e.fired.length > 0;
  const cause = refused ? haltCause(s, r, e) : null;
  const action: Action = !refused ? 'NONE' : cause === null ? 'SPILL' : 'HALT';
  const id = action === 'SPILL' ? spillRequestId(stamps.sessionId, r.requestId, r.seq) : null;
  const want = spillRange(s, r);
  const verdict: Verdict = {
    sessionId: stamps.sessionId,
    requestId: r.requestId,
    decision: refused ? 'REFUSE' : 'APPROVE',
    basis: refused ? null : basisOf(s, r, e),
    action,
    reasons,
    rulesChecked: e.rulesChecked,
    diagnostic: refused ? diagnosticFor(e, unit, action, cause, want) : null,
    spillRequestId: id,
    inputSeq: r.seq,
    requestEventId: r.eventId,
    requestedAt: r.occurredAt,
    decidedAt: stamps.decidedAt,
    engineVersion: stamps.engineVersion,
  };
  if (id === null) return { verdict, spillRequest: null };
  const holes = e.fired.reduce<IntervalSet>((acc, f) => union(acc, f.holes), EMPTY);
  const spillRequest: SpillRequest = {
    spillRequestId: id,
    sessionId: stamps.sessionId,
    requestId: r.requestId,
    requestEventId: r.eventId,
    unit: want.unit,
    range: { start: want.start, end: want.end },
    holes: reportedSpans(holes).map((h) => ({ unit, ...h })),
    reasons,
    requestedAt: r.occurredAt,
  };
  return { verdict, spillRequest };
}

/** contract §3: a malformed request that could be identified is answered, never stored. */
export function refuseMalformed(
  r: {
    requestId: string;
    eventId: string | null;
    seq: number;
    occurredAt: number | null;
    error: string;
  },
  stamps: DecisionStamps,
): Verdict {
  return {
    sessionId: stamps.sessionId,
    requestId: r.requestId,
    decision: 'REFUSE',
    basis: null,
    action: 'HALT',
    reasons: [{ code: 'INVALID_REQUEST', message: `malformed request: ${r.error}`, holes: [] }],
    rulesChecked: ['INVALID_REQUEST'],
    diagnostic: `REFUSE (HALT): the compaction request could not be decoded (${r.error}); no spill can help: send a corrected request.`,
    spillRequestId: null,
    inputSeq: r.seq,
    requestEventId: r.eventId,
    requestedAt: r.occurredAt,
    decidedAt: stamps.decidedAt,
    engineVersion: stamps.engineVersion,
  };
}
