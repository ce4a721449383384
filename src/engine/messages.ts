/** Readable reasons and diagnostics (contract §6): every hole named, and for HALT why no spill helps. */
import type { Unit } from './events';
import type { Action, RuleCode } from './outputs';
import { type IntervalSet, format, isEmpty } from './intervals';
import type { Evaluation, FiredRule, RequestInput } from './evaluation';
import type { SessionState } from './state';

const WHAT: Record<RuleCode, string> = {
  UNKNOWN_SESSION: 'no SessionOpened was seen for this session, so nothing can be proven',
  EVENT_GAP: 'events of this session were lost, so nothing below the gap head can be proven',
  UNIT_MISMATCH: 'the recovery floor cannot be enforced in this unit (seed condition 4)',
  INVALID_REQUEST:
    'the request names positions beyond anything known, a reversed input, or a tail below the verbatim start',
  FLOOR_NOT_IN_INPUT:
    'the summarizer input does not reach back over the recovery floor before the tail',
  TRUNCATION_IN_FLOOR: 'a truncation removed positions inside the recovery floor before the tail',
  SEAM_HOLE: 'the summary input ends before the tail starts: the seam has a hole',
  TAIL_BELOW_FLOOR: 'the most recent floor span would not stay verbatim',
  EVICTED_PINNED:
    'pinned content (constraint, plan, commitment, open tool call) would leave the context with no summary accounting for it',
  EVICTED_UNCOVERED: 'content would leave the context with no summary accounting for it',
};

function where(holes: IntervalSet, unit: Unit): string {
  return `${unit} ${format(holes)}`;
}

/** UNKNOWN_SESSION says why the session is not known (§4: no policy, a drop, a contest). */
function unknownWhy(s: SessionState): string {
  if (s.policy) {
    return "the session's policy is contested (a SessionOpened arrived in conflict with the sequence), so nothing before the tail can be proven";
  }
  if (s.evidenceHead !== null) {
    return "the session's state was dropped (closed past its grace period, idle past its idle period, or refused at capacity) and no SessionOpened was seen since, so nothing below the evidence head can be proven";
  }
  return WHAT.UNKNOWN_SESSION;
}

export function messageFor(f: FiredRule, r: RequestInput, s: SessionState, unit: Unit): string {
  const base = f.code === 'UNKNOWN_SESSION' ? unknownWhy(s) : WHAT[f.code];
  if (f.code === 'UNIT_MISMATCH' && s.policy) {
    const p = s.policy;
    return `${base}: floor in ${p.floor.unit}, truncator in ${p.truncatorUnit}, request in ${r.unit}`;
  }
  if (f.code === 'INVALID_REQUEST') {
    return `${base}: summaryInput [${r.summaryInput.start},${r.summaryInput.end}), tailStart ${r.tailStart}`;
  }
  if (!isEmpty(f.holes)) return `${base}: unrecoverable at ${where(f.holes, unit)}`;
  if (!isEmpty(f.spillNeed))
    return `${base}: ${where(f.spillNeed, unit)} is neither spilled nor acknowledged`;
  return base;
}

export function diagnosticFor(
  e: Evaluation,
  unit: Unit,
  action: Action,
  haltCause: string | null,
  want: { unit: Unit; start: number; end: number },
): string {
  // Every fired rule with its own holes: "a readable sentence naming every hole" (contract §6).
  const rules = e.fired.map((f) => {
    if (!isEmpty(f.holes)) return `${f.code} at ${where(f.holes, unit)}`;
    if (!isEmpty(f.spillNeed))
      return `${f.code} (${where(f.spillNeed, unit)} neither spilled nor acknowledged)`;
    return f.code;
  });
  const head = `REFUSE (${action}): ${rules.join('; ')}.`;
  if (action === 'SPILL') {
    return `${head} Spill ${want.unit} [${want.start},${want.end}) losslessly, then retry the compaction.`;
  }
  return `${head} No spill can help: ${haltCause}.`;
}
