/** The `/sessions/{id}` view: a session's state in readable ranges, and its last verdicts. */
import type { Unit } from '../engine/events';
import type { AuditRecord, Verdict } from '../engine/outputs';
import { type IntervalSet, subtract, toSpans, union } from '../engine/intervals';
import { type SessionState, heads, inUnit, knownHead } from '../engine/state';
import { extentIn } from '../engine/extent';

const spans = (unit: Unit, set: IntervalSet | undefined) =>
  toSpans(set ?? []).map((s) => ({ unit, ...s }));

export function sessionView(
  sessionId: string,
  partition: number,
  s: SessionState,
  recent: readonly Verdict[],
  violations: readonly AuditRecord[] = [],
) {
  const unit = s.policy?.floor.unit ?? null;
  const perUnit = (sets: SessionState['spilled']) =>
    (Object.entries(sets) as [Unit, IntervalSet][]).flatMap(([u, set]) => spans(u, set));
  return {
    sessionId,
    partition,
    known: s.policy !== null,
    policy: s.policy,
    lastSeq: s.lastSeq,
    head: heads(s),
    knownHead: unit ? knownHead(s, unit) : null,
    gapHead: s.gapHead,
    verbatimStart: s.verbatimStart,
    truncated: unit ? spans(unit, s.truncated) : [],
    summarized: unit ? spans(unit, s.summary) : [],
    spilled: perUnit(s.spilled),
    // A = A0 ∪ A1 (contract §4, LossAcknowledged), then its two parts: an acknowledgement
    // usually lands in both, and listing them side by side read as two acknowledgements.
    acknowledged: perUnit(acknowledged(s, unit)),
    acknowledgedForGood: unit ? spans(unit, s.ackPermanent) : [],
    acknowledgedOnce: perUnit(s.ackOnce),
    unspillable: perUnit(s.unspillable),
    pins: unit ? spans(unit, s.pins) : [],
    evicted: unit ? spans(unit, evicted(s, unit)) : [],
    spillFailed: s.spillFailed,
    pendingSpill: s.pendingSpill,
    closedAt: s.closedAt,
    // contract §4b: a signature must not expire before it (a signing tool starts its validity here).
    lastEventAt: s.lastEventAt,
    // An unknown session's spills and acknowledgements are clipped to [0, extent) per unit
    // (contract §4: max(E, F)), so an operator sees how far an acknowledgement reaches.
    extent: unit ? null : extentView(s),
    lastVerdicts: recent,
    lastViolations: violations,
    storedVerdicts: s.verdicts.map((v) => ({
      unit: v.unit,
      summaryInput: { start: v.sIn, end: v.eIn },
      tailStart: v.tailStart,
      decision: v.decision,
      inputSeq: v.inputSeq,
      requestedAt: v.requestedAt,
    })),
  };
}

function extentView(s: SessionState): Record<Unit, number> {
  return {
    TURNS: extentIn(s, 'TURNS'),
    TOKENS: extentIn(s, 'TOKENS'),
    MESSAGES: extentIn(s, 'MESSAGES'),
  };
}

/** A = A0 ∪ A1 per unit: the permanent write-off is in the floor unit. */
function acknowledged(s: SessionState, unit: Unit | null): SessionState['ackOnce'] {
  if (unit === null) return s.ackOnce;
  return { ...s.ackOnce, [unit]: union(s.ackPermanent, inUnit(s.ackOnce, unit)) };
}

/** Truncated positions that no summary, spill or acknowledgement covers: the lost content. */
function evicted(s: SessionState, unit: Unit): IntervalSet {
  const recoverable = union(
    s.summary,
    union(inUnit(s.spilled, unit), union(s.ackPermanent, inUnit(s.ackOnce, unit))),
  );
  return subtract(s.truncated, recoverable);
}
