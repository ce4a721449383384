/**
 * The records of the worst amplification (bench/amplification.ts), shared with the burst test
 * (test/integration/budget.test.ts): a session of many turns, every other one pinned, and short
 * compaction requests that leave pins out, each refused with reasons listing holes and a spill
 * request.
 */
import type { CompactionRequested, ContextEvent, SessionOpened } from '../src/engine/events';

/** bench/fragmentation.ts's policy: PINNED coverage, a floor of 12 turns, spills enabled. */
export const PINNED_POLICY: SessionOpened['policy'] = {
  windowTokens: 200_000,
  triggerTokens: 160_000,
  ceilingTokens: 160_000,
  floor: { unit: 'TURNS', span: 12 },
  truncatorUnit: 'TURNS',
  coverage: 'PINNED',
  spill: 'ENABLED',
};

/** A session of `turns` turns from `t0`, every other one pinned, in the PINNED coverage (as bench/fragmentation.ts). */
export function fragmented(
  turns: number,
  id: string,
  t0: number,
): { events: ContextEvent[]; seq: number } {
  let seq = 0;
  const env = () => ({ sessionId: id, seq, eventId: `${id}${seq}`, occurredAt: t0 + seq++ });
  const events: ContextEvent[] = [
    {
      type: 'SessionOpened',
      ...env(),
      policy: PINNED_POLICY,
    },
  ];
  for (let t = 0; t < turns; t++) {
    const pin = t % 2 === 0;
    events.push({
      type: 'TurnAppended',
      ...env(),
      turn: t,
      tokens: { start: 10 * t, end: 10 * t + 10 },
      messages: { start: t, end: t + 1 },
      role: pin ? 'USER' : 'ASSISTANT',
      pins: pin ? ['CONSTRAINT'] : [],
    });
  }
  return { events, seq };
}

/**
 * The i-th short request of a 400-turn `fragmented` session: a summary of turns
 * [summaryStart, 388) with the tail from 388, so the pins below `summaryStart` are left out.
 */
export function shortRequest(
  sessionId: string,
  i: number,
  seq: number | null,
  occurredAt: number,
  summaryStart = 200,
): CompactionRequested {
  return {
    type: 'CompactionRequested',
    sessionId,
    seq,
    eventId: `x${i}`,
    occurredAt,
    requestId: `r${i}`,
    unit: 'TURNS',
    summaryInput: { start: summaryStart, end: 388 },
    tailStart: 388,
    occupancyTokens: 170_000,
  } as CompactionRequested;
}
