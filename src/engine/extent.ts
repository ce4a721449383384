/**
 * The extent E of an unknown session (contract §4): per unit, the greatest position
 * that events which advanced the session told of, never below F. An unknown session's spills
 * and acknowledgements are clipped to [0, E): a spill covers only positions known to exist,
 * never positions appended later, so a signed answer to a forged request for [0, 2^52−1)
 * cannot pre-heal what the session has not reached yet (evolve-rev12.test.ts, "is clipped to
 * its extent E").
 */
import type { ContextEvent, MalformedRequest, Unit } from './events';
import { type EvidenceHead, type SessionState, turnSpan } from './state';
import { evidenceIn } from './drop';
import { UNIT_SYMBOLS } from './events';
import { unreachable } from './unreachable';

const NO_EXTENT: EvidenceHead = Object.freeze({ TURNS: 0, TOKENS: 0, MESSAGES: 0 });

function raiseExtent(s: SessionState, unit: Unit, end: number): void {
  const e = s.extent;
  if (e !== null && e[unit] >= end) return;
  s.extent = { ...(e ?? NO_EXTENT), [unit]: end };
}

/**
 * E := max(E, what the event names), for an event that advanced an unknown session: a
 * TurnAppended's end in every unit, a Truncated range's end and a decided request's
 * max(summaryInput.end, tailStart) in their own unit (even though the session ignores the
 * first two). No other event raises it: spills and acknowledgements are what E clips, and the
 * rest are not among the events §4 counts.
 */
export function raiseExtentBy(s: SessionState, e: ContextEvent | MalformedRequest): void {
  switch (e.type) {
    case 'TurnAppended':
      for (const u of UNIT_SYMBOLS) raiseExtent(s, u, turnSpan(e, u).end);
      return;
    case 'Truncated':
      raiseExtent(s, e.unit, e.range.end);
      return;
    case 'CompactionRequested':
      raiseExtent(s, e.unit, Math.max(e.summaryInput.end, e.tailStart));
      return;
    case 'SessionOpened':
    case 'MalformedRequest':
    case 'CompactionCommitted':
    case 'SpillCompleted':
    case 'SpillFailed':
    case 'LossAcknowledged':
    case 'SessionClosed':
      return;
    default:
      unreachable(e);
  }
}

/** How far an unknown session's spill or acknowledgement may reach in `unit`: max(E, F). */
export function extentIn(s: SessionState, unit: Unit): number {
  const e = s.extent === null ? 0 : s.extent[unit];
  return Math.max(e, evidenceIn(s, unit));
}
