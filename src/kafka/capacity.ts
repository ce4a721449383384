/**
 * Memory bounded per instance, failing closed (docs/contract.md §8 "Capacity"): at most
 * `CG_MAX_SESSIONS` sessions hold state. At the cap the processor creates no new session
 * state: the events of a session it does not hold are counted and not stored, its requests are
 * refused (UNKNOWN_SESSION, HALT, the diagnostic naming the cap), and its id joins the
 * partition's refused filter (refusedFilter.ts), so that once room frees it starts blind
 * instead of as if it had no past. Sessions held are never evicted to make room: one that lost
 * its history could be approved where its history would refuse. Room frees when idle or closed
 * sessions expire (partition.ts).
 */
import type { Verdict } from '../engine/outputs';

/**
 * The instance's count of sessions against its cap. `held` is the committed count over all
 * assigned partitions; batches being planned reserve a slot for each session they create, and
 * give the reservations back once their transaction committed (the committed count then has
 * them) or failed.
 */
export class SessionCapacity {
  private reserved = 0;

  constructor(
    readonly max: number,
    private readonly held: () => number,
  ) {}

  /** A slot for a new session, if one is free (then reserved until `release`). */
  tryReserve(): boolean {
    if (this.held() + this.reserved >= this.max) return false;
    this.reserved++;
    return true;
  }

  release(n: number): void {
    this.reserved = Math.max(0, this.reserved - n);
  }
}

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
