/**
 * OwnedFleet (in place, ordinary turns on the TurnArena) is an optimization, not a second
 * engine: for every event it publishes what `Fleet` (immutable values, `evolve`) publishes, and
 * the states it hands out are the same states.
 */
import fc from 'fast-check';
import {
  type EngineInput,
  type SessionState,
  type TurnAppended,
  Fleet,
  emptyState,
  engineOptions,
  evolve,
} from '../../src/engine';
import { withCanonicalRing } from '../../src/engine/sequence';
import { OwnedFleet } from '../../bench/arena/ownedFleet';
import { TurnArena } from '../../bench/arena/turnArena';
import { generateFleetArray } from '../../src/sim';
import {
  chaosStream,
  healingStream,
  memoryStream,
  openedChaosStream,
} from '../support/arbitraries';
import { SessionBuilder } from '../support/sessionBuilder';

const decidedAt = (e: EngineInput) => e.occurredAt ?? 0;

/** Both fleets over the same events: every step's outputs and notes, and every final state. */
function expectSameFleets(
  events: readonly EngineInput[],
  options = engineOptions(),
  peekAt: ReadonlySet<number> = new Set(),
): void {
  const values = new Fleet(options);
  const owned = new OwnedFleet(options);
  events.forEach((e, i) => {
    const want = values.process(e, decidedAt(e));
    const got = owned.process(e, decidedAt(e));
    expect({ i, outputs: got.outputs, notes: got.notes }).toStrictEqual({
      i,
      outputs: want.outputs,
      notes: want.notes,
    });
    // Reading a state mid-stream (as `audit` or a test would) changes nothing that follows.
    if (peekAt.has(i)) {
      expect(withCanonicalRing(owned.get(e.sessionId)!)).toStrictEqual(
        withCanonicalRing(values.get(e.sessionId)!),
      );
    }
  });
  expect(owned.size).toBe(values.size);
  for (const [id, state] of owned.entries()) {
    expect(withCanonicalRing(state)).toStrictEqual(withCanonicalRing(values.get(id)!));
  }
}

/** Several generated sessions, renamed apart and interleaved by a generated schedule. */
const interleaved = fc
  .tuple(
    fc.array(fc.oneof(openedChaosStream, healingStream, memoryStream, chaosStream), {
      minLength: 1,
      maxLength: 4,
    }),
    fc.array(fc.nat(), { maxLength: 600 }),
  )
  .map(([streams, schedule]) => {
    const queues = streams.map((events, k) => events.map((e) => ({ ...e, sessionId: `s${k}` })));
    const out: EngineInput[] = [];
    let j = 0;
    while (queues.some((q) => q.length > 0)) {
      const live = queues.filter((q) => q.length > 0);
      out.push(live[(schedule[j++] ?? 0) % live.length]!.shift()!);
    }
    return out;
  });

describe('OwnedFleet', () => {
  it('publishes what Fleet publishes for every event of interleaved generated sessions, and ends in the same states', () => {
    fc.assert(
      fc.property(interleaved, (events) => expectSameFleets(events)),
      { numRuns: 300 },
    );
  });

  it('is unchanged by reading states mid-stream (each read writes the arena back)', () => {
    fc.assert(
      fc.property(interleaved, fc.array(fc.nat(), { maxLength: 40 }), (events, picks) => {
        const peekAt = new Set(picks.map((p) => p % Math.max(1, events.length)));
        expectSameFleets(events, engineOptions(), peekAt);
      }),
      { numRuns: 200 },
    );
  });

  it.each([1, 2, 3])(
    'matches Fleet on a simulated fleet (seed %i): 1,500 sessions over two arena pages, faults, closes and a short grace',
    (seed) => {
      const { events } = generateFleetArray({
        sessions: 1_500,
        events: 40_000,
        seed,
        faultyShare: 0.3,
        closeShare: 0.3,
        stepMs: 50,
      });
      expectSameFleets(events, engineOptions({ graceMs: 60_000 }), new Set([5_000, 20_000]));
    },
  );

  it('reuses the slot of a deleted session for a new one, which starts from nothing', () => {
    const fleet = new OwnedFleet();
    for (const e of new SessionBuilder('a').open().turns(40).events) fleet.process(e, 0);
    expect(fleet.delete('a')).toBe(true);
    expect(fleet.delete('a')).toBe(false);
    expect(fleet.get('a')).toBeUndefined();
    for (const e of new SessionBuilder('b').open().turns(1).events) fleet.process(e, 0);
    expect(fleet.get('b')!.lastSeq).toBe(1);
    expect(fleet.get('b')!.recent.length).toBe(4);
    expect(fleet.size).toBe(1);
  });

  it('takes a state handed over with set and continues it with later events', () => {
    const events = new SessionBuilder('x').open().turns(50).events;
    let state: SessionState | undefined;
    for (const e of events.slice(0, 30)) state = evolve(state, e, 0, engineOptions()).state!;
    const fleet = new OwnedFleet();
    fleet.set('x', state!);
    for (const e of events.slice(30)) fleet.process(e, 0);
    let expected = state!;
    for (const e of events.slice(30)) expected = evolve(expected, e, 0, engineOptions()).state!;
    expect(withCanonicalRing(fleet.get('x')!)).toStrictEqual(withCanonicalRing(expected));
  });
});

describe('TurnArena', () => {
  function opened(): { state: SessionState; builder: SessionBuilder } {
    const builder = new SessionBuilder('t').open();
    const state = evolve(undefined, builder.last, 0, engineOptions()).state!;
    return { state, builder };
  }
  const nextTurn = (b: SessionBuilder) => b.turn(100).last as TurnAppended;
  const IDLE_MS = engineOptions().idleMs;

  it('takes an in-order turn exactly as evolve does, across the ring filling up and wrapping', () => {
    const { state, builder } = opened();
    const arena = new TurnArena();
    arena.reserve(3);
    arena.load(2, state);
    let expected = state;
    for (let i = 0; i < 70; i++) {
      const turn = nextTurn(builder);
      expect(arena.appendInOrder(2, turn, IDLE_MS)).toBe(true);
      expected = evolve(expected, turn, 0, engineOptions()).state!;
      if (i % 17 === 0 || i === 31) {
        const copy = { ...state, recent: [...state.recent] };
        arena.flush(2, copy);
        expect(copy).toStrictEqual(expected);
        arena.load(2, copy);
      }
    }
  });

  it('refuses (changing nothing) a cold slot, a closed or unknown session, a gap and a redelivery', () => {
    const arena = new TurnArena();
    arena.reserve(1);
    const { state, builder } = opened();
    const first = nextTurn(builder);
    expect(arena.appendInOrder(0, first, IDLE_MS)).toBe(false); // never loaded: cold
    arena.load(0, emptyState());
    expect(arena.isHot(0)).toBe(false); // unknown session (no SessionOpened)
    arena.load(0, { ...state, closedAt: 5 });
    expect(arena.isHot(0)).toBe(false);
    arena.load(0, state);
    expect(arena.appendInOrder(0, first, IDLE_MS)).toBe(true);
    expect(arena.appendInOrder(0, first, IDLE_MS)).toBe(false); // redelivery: seq not next
    expect(arena.appendInOrder(0, { ...nextTurn(builder), seq: 9 }, IDLE_MS)).toBe(false);
    const late = { ...nextTurn(builder), seq: first.seq + 1 };
    expect(
      arena.appendInOrder(0, { ...late, occurredAt: first.occurredAt + IDLE_MS + 1 }, IDLE_MS),
    ).toBe(false); // idle: the state is dropped first
    const copy = { ...state, recent: [...state.recent] };
    arena.flush(0, copy);
    expect(copy).toStrictEqual(evolve(state, first, 0, engineOptions()).state);
    expect(arena.isHot(0)).toBe(false);
  });
});
