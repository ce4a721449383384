/**
 * The one lifecycle helper (src/lifecycle.ts) under the client's and the partition's: a move is
 * taken exactly when the table lists it, a refused one throws the owner's typed error and leaves
 * the state where it was, and only taken moves are reported. Each owner's own table is tested
 * pair by pair in client-lifecycle.test.ts and partition-lifecycle.test.ts.
 */
import {
  IllegalTransitionError,
  Lifecycle,
  allows,
  type TransitionTable,
} from '../../src/lifecycle';

const STATES = ['idle', 'busy', 'done'] as const;
type S = (typeof STATES)[number];
const TABLE: TransitionTable<S> = { idle: ['busy', 'done'], busy: ['idle', 'done'], done: [] };

class IllegalDemoTransition extends IllegalTransitionError<S> {
  constructor(from: S, to: S) {
    super('ILLEGAL_DEMO_TRANSITION', 'demo', from, to);
  }
}

/** A lifecycle brought to `state` along allowed moves, reporting into `seen`. */
function at(state: S, seen: string[] = []): Lifecycle<S> {
  const l = new Lifecycle<S>(
    TABLE,
    'idle',
    (from, to) => new IllegalDemoTransition(from, to),
    (from, to) => seen.push(`${from}->${to}`),
  );
  if (state !== 'idle') l.to(state);
  seen.length = 0;
  return l;
}

/** What `move` threw (undefined: nothing). */
function refusalOf(move: () => void): unknown {
  try {
    move();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('the generic lifecycle', () => {
  it.each(STATES.flatMap((from) => STATES.map((to) => [from, to] as const)))(
    '%s -> %s is taken exactly when the table lists it',
    (from, to) => {
      const seen: string[] = [];
      const l = at(from, seen);
      if (TABLE[from].includes(to)) {
        expect(allows(TABLE, from, to)).toBe(true);
        l.to(to);
        expect(l.state).toBe(to);
        expect(seen).toEqual([`${from}->${to}`]);
      } else {
        expect(allows(TABLE, from, to)).toBe(false);
        const thrown = refusalOf(() => l.to(to));
        expect(thrown).toBeInstanceOf(IllegalDemoTransition);
        expect(thrown).toMatchObject({
          name: 'IllegalTransitionError',
          code: 'ILLEGAL_DEMO_TRANSITION',
          machine: 'demo',
          from,
          to,
          message: `demo: illegal lifecycle transition ${from} -> ${to}`,
        });
        expect(l.state).toBe(from);
        expect(seen).toEqual([]);
      }
    },
  );

  it('a state with no moves out is terminal, and only such a state', () => {
    for (const s of STATES) expect([s, at(s).terminal]).toEqual([s, s === 'done']);
  });
});
