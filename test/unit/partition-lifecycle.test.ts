/**
 * The partition lifecycle (src/kafka/partitionLifecycle.ts): every (from, to) pair of the six
 * states is either in the transition table or refused with IllegalPartitionTransitionError (an
 * IllegalTransitionError of src/lifecycle.ts), and a refused move leaves the state where it was.
 */
import { IllegalTransitionError } from '../../src/lifecycle';
import {
  IllegalPartitionTransitionError,
  PARTITION_STATES,
  PARTITION_TRANSITIONS,
  PartitionLifecycle,
  canTransition,
  type PartitionState,
} from '../../src/kafka/partitionLifecycle';

/** The lifecycle the processor needs, written out pair by pair (the table must say exactly this). */
const ALLOWED: [PartitionState, PartitionState][] = [
  ['assigned', 'restoring'],
  ['assigned', 'revoked'],
  ['assigned', 'closed'],
  ['restoring', 'running'],
  ['restoring', 'revoked'],
  ['restoring', 'closed'],
  ['running', 'resyncing'],
  ['running', 'revoked'],
  ['running', 'closed'],
  ['resyncing', 'running'],
  ['resyncing', 'revoked'],
  ['resyncing', 'closed'],
];

const isAllowed = (from: PartitionState, to: PartitionState) =>
  ALLOWED.some(([f, t]) => f === from && t === to);

const ALL_PAIRS = PARTITION_STATES.flatMap((from) =>
  PARTITION_STATES.map((to) => [from, to] as [PartitionState, PartitionState]),
);

/** A lifecycle brought to `state` along allowed moves. */
function at(state: PartitionState): PartitionLifecycle {
  const path: Record<PartitionState, PartitionState[]> = {
    assigned: [],
    restoring: ['restoring'],
    running: ['restoring', 'running'],
    resyncing: ['restoring', 'running', 'resyncing'],
    revoked: ['revoked'],
    closed: ['closed'],
  };
  const l = new PartitionLifecycle(3);
  for (const s of path[state]) l.to(s);
  expect(l.state).toBe(state);
  return l;
}

describe('partition lifecycle', () => {
  it('starts assigned', () => {
    expect(new PartitionLifecycle(0).state).toBe('assigned');
  });

  it('the table allows exactly the listed transitions', () => {
    for (const [from, to] of ALL_PAIRS) {
      expect([from, to, canTransition(from, to)]).toEqual([from, to, isAllowed(from, to)]);
    }
    const inTable = PARTITION_STATES.reduce((n, s) => n + PARTITION_TRANSITIONS[s].length, 0);
    expect(inTable).toBe(ALLOWED.length);
  });

  it.each(ALLOWED)('allows %s -> %s', (from, to) => {
    const l = at(from);
    l.to(to);
    expect(l.state).toBe(to);
  });

  it.each(ALL_PAIRS.filter(([f, t]) => !isAllowed(f, t)))(
    'refuses %s -> %s with IllegalPartitionTransitionError and stays put',
    (from, to) => {
      const l = at(from);
      let thrown: unknown;
      try {
        l.to(to);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(IllegalPartitionTransitionError);
      expect(thrown).toBeInstanceOf(IllegalTransitionError);
      expect(thrown).toMatchObject({
        code: 'ILLEGAL_PARTITION_TRANSITION',
        partition: 3,
        from,
        to,
        message: `partition 3: illegal lifecycle transition ${from} -> ${to}`,
      });
      expect(l.state).toBe(from);
    },
  );

  it('revoked and closed are terminal and ended; the others are not', () => {
    for (const s of PARTITION_STATES) {
      const terminal = s === 'revoked' || s === 'closed';
      expect([s, at(s).ended]).toEqual([s, terminal]);
      expect([s, PARTITION_TRANSITIONS[s].length === 0]).toEqual([s, terminal]);
    }
  });

  it('reports each transition, in order, and none that was refused', () => {
    const seen: string[] = [];
    const l = new PartitionLifecycle(1, (from, to) => seen.push(`${from}->${to}`));
    l.to('restoring');
    l.to('running');
    expect(() => l.to('restoring')).toThrow(IllegalPartitionTransitionError);
    l.to('resyncing');
    l.to('running');
    l.to('revoked');
    expect(seen).toEqual([
      'assigned->restoring',
      'restoring->running',
      'running->resyncing',
      'resyncing->running',
      'running->revoked',
    ]);
  });
});
