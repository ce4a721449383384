/**
 * What a request of a session refused at capacity is answered (docs/decisions.md 121): the
 * capacity gate (gate.ts) refuses the session, the planner asks the engine on a blind state,
 * and this makes the verdict say why.
 */
import type { Verdict } from '../../engine/outputs';

/**
 * The verdict for a request of a session refused at capacity: the engine's decision on a blind
 * unknown state (always REFUSE, UNKNOWN_SESSION), made a HALT without a spill request, since no
 * state is kept that a spill could heal, with a diagnostic that names the cap.
 */
export function atCapacityVerdict(v: Verdict, max: number): Verdict {
  const unknown = v.reasons.some((r) => r.code === 'UNKNOWN_SESSION');
  const reason = {
    code: 'UNKNOWN_SESSION' as const,
    message: `no state is kept for this session: the instance is at CG_MAX_SESSIONS (${max})`,
    holes: [],
  };
  return {
    ...v,
    decision: 'REFUSE',
    reasons: unknown ? v.reasons : [reason, ...v.reasons],
    basis: null,
    action: 'HALT',
    spillRequestId: null,
    diagnostic:
      `REFUSE (HALT): UNKNOWN_SESSION: this instance already holds its limit of ${max} sessions ` +
      '(CG_MAX_SESSIONS) and keeps no state for a new one, so nothing about this session can be ' +
      'proven, and no spill can help. Room frees as idle or closed sessions expire (or raise ' +
      'CG_MAX_SESSIONS, or add instances); even then this session starts blind, with nothing ' +
      'before its next stored event counted as known.',
  };
}
