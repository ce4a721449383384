/** Steps 1 and 2 of DESIGN §4: classify an event's seq, and raise the gap head on a gap. */
import type { ContextEvent, MalformedRequest, Unit } from './events';
import { REMEMBERED_EVENT_IDS, type SessionState, turnSpan } from './state';

export type SeqClass = 'next' | 'gap' | 'duplicate' | 'conflict';

/** Step 1. `idHash` is null when the eventId is not known (a malformed request). */
export function classifySeq(s: SessionState, seq: number, idHash: number | null): SeqClass {
  if (s.lastSeq >= 0 && seq <= s.lastSeq) {
    const i = s.recentSeqs.indexOf(seq);
    return i >= 0 && idHash !== null && s.recentIds[i] === idHash ? 'duplicate' : 'conflict';
  }
  return seq === s.lastSeq + 1 ? 'next' : 'gap';
}

/** Remembers an accepted event's id: the 32 highest seqs are kept (DESIGN §4). */
export function rememberEventId(s: SessionState, seq: number, idHash: number): void {
  const seqs = s.recentSeqs;
  const ids = s.recentIds;
  seqs.push(seq);
  ids.push(idHash);
  if (seqs.length > REMEMBERED_EVENT_IDS) {
    seqs.shift();
    ids.shift();
  }
}

/** The positions an event names in U (step 2): a turn's end, a range's end, a request's reach. */
export function namedPosition(e: ContextEvent | MalformedRequest, unit: Unit): number {
  switch (e.type) {
    case 'TurnAppended':
      return turnSpan(e, unit).end;
    case 'Truncated':
    case 'SpillCompleted':
    case 'LossAcknowledged':
      return e.unit === unit ? e.range.end : 0;
    case 'CompactionRequested':
    case 'CompactionCommitted':
      return e.unit === unit ? Math.max(e.summaryInput.end, e.tailStart) : 0;
    default:
      return 0;
  }
}

/**
 * Step 2: on a gap, with a policy, Hg := max(Hg, H, position). Every gap also marks the
 * state as changed for stored verdicts (DESIGN §5, "Repeated requestId").
 */
export function raiseGapHead(s: SessionState, position: number): void {
  s.epoch++;
  if (!s.policy) return;
  const unit = s.policy.floor.unit;
  const h = Math.max(s.head[unit], position);
  s.gapHead = s.gapHead === null ? h : Math.max(s.gapHead, h);
}
