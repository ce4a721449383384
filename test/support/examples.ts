/** The example sessions shipped in examples/ (regenerate: `UPDATE_EXAMPLES=1 npx jest examples`). */
import type { ContextEvent, Policy } from '../../src/engine/events';
import { SessionBuilder, seedIncident, SEED_POLICY } from './sessionBuilder';

/** The seed's incident, its lossless spill echoing the spill request's id, the retry and the commit. */
export function seedIncidentExample(): ContextEvent[] {
  const b = seedIncident('seed-incident');
  const requestSeq = b.events[b.events.length - 1]!.seq;
  b.spilled(`seed-incident:compact-1:${requestSeq}`, 'TURNS', 0, 52);
  b.request('compact-1', 'TURNS', 8, 40, 40);
  b.commit('compact-1', 'TURNS', 8, 40, 40);
  return b.events;
}

const WELL_BEHAVED_POLICY: Policy = {
  ...SEED_POLICY,
  triggerTokens: 120_000,
  floor: { unit: 'TURNS', span: 6 },
};

/** Compaction before truncation, summary input reaching the tail, floor kept: approved. */
export function wellBehavedExample(): ContextEvent[] {
  const b = new SessionBuilder('well-behaved', 1_767_229_200_000).open(WELL_BEHAVED_POLICY);
  b.turn(900, 'SYSTEM').turn(250, 'USER', ['CONSTRAINT']).turn(700, 'ASSISTANT', ['PLAN']);
  for (let i = 0; i < 17; i++) b.turn(4000, i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL');
  // The summarizer also reads the first two tail turns, so the summary covers [0,16).
  b.request('c-1', 'TURNS', 0, 16, 14).commit('c-1', 'TURNS', 0, 16, 14);
  // Verbatim positions the summary already covers may be dropped without loss.
  b.truncate('TURNS', 14, 16);
  for (let i = 0; i < 10; i++) b.turn(3000, i % 2 ? 'ASSISTANT' : 'USER');
  b.request('c-2', 'TURNS', 0, 24, 24).commit('c-2', 'TURNS', 0, 24, 24);
  b.close();
  return b.events;
}

/** Spills disabled: the eviction HALTs until an operator acknowledges the loss. */
export function haltThenAcknowledgeExample(): ContextEvent[] {
  const policy: Policy = { ...SEED_POLICY, triggerTokens: 150_000, spill: 'DISABLED' };
  const b = new SessionBuilder('halt-then-ack', 1_767_232_800_000).open(policy);
  b.turn(1000, 'SYSTEM').turn(300, 'USER', ['CONSTRAINT']);
  for (let i = 0; i < 30; i++) b.turn(5000, i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL');
  b.truncate('TURNS', 0, 4);
  b.request('c-1', 'TURNS', 4, 20, 20);
  // Out of band (contract §4 step 0): the operator does not own the session's sequence.
  b.outOfBand().acknowledge(
    'TURNS',
    0,
    4,
    'oncall@example.com',
    'constraint re-stated by the user in turn 31',
  );
  b.request('c-1', 'TURNS', 4, 20, 20);
  b.commit('c-1', 'TURNS', 4, 20, 20);
  return b.events;
}

export const EXAMPLES: Record<string, () => ContextEvent[]> = {
  'seed-incident.jsonl': seedIncidentExample,
  'well-behaved.jsonl': wellBehavedExample,
  'halt-then-acknowledge.jsonl': haltThenAcknowledgeExample,
};

/** One event per line; an unsigned event's `signature: null` is left out (absent means null, §3). */
export function toJsonLines(events: readonly ContextEvent[]): string {
  const unsigned = (key: string, value: unknown) =>
    key === 'signature' && value === null ? undefined : value;
  return events.map((e) => JSON.stringify(e, unsigned)).join('\n') + '\n';
}
