/**
 * The capacity gate's rules (src/kafka/capacity/gate.ts), without the planner: the instance's
 * count against its cap (`SessionCapacity`), one plan's places under it (`CapacityGate`), who is
 * refused and who starts blind. What the planner makes of them (verdicts, changelog records) is
 * test/unit/capacity.test.ts.
 */
import fc from 'fast-check';
import type { EngineInput } from '../../src/engine/evolve';
import { CapacityGate, SessionCapacity, createsSession } from '../../src/kafka/capacity/gate';
import { RefusedFilter } from '../../src/kafka/capacity/refusedFilter';
import { SessionBuilder } from '../support/sessionBuilder';
import { testRing } from '../support/testRing';
import { unsignedJunk } from '../support/unsignedJunk';

const ring = testRing([['ACKNOWLEDGE', 'SPILL']]);

/** An unsigned out-of-band event (seq null): unauthorized under a ring. */
const outOfBand = unsignedJunk;

/** An in-band event (a SessionOpened). */
const inBand = (id: string): EngineInput => new SessionBuilder(id, 1).open().events[0]!;

/** One step of several plans over one instance cap. */
type Op =
  | { kind: 'take'; plan: number }
  | { kind: 'giveBack'; plan: number }
  | { kind: 'release'; plan: number };

const ops = (plans: number) =>
  fc.array(
    fc.record({
      kind: fc.constantFrom<Op['kind']>('take', 'giveBack', 'release'),
      plan: fc.nat({ max: plans - 1 }),
    }),
    { maxLength: 60 },
  );

describe('SessionCapacity', () => {
  it('never reserves past the cap: held plus reserved stays at most max, and no slot is reserved while held is at or over it', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 10 }),
        fc.nat({ max: 14 }),
        fc.array(fc.option(fc.nat({ max: 4 }), { nil: undefined }), { maxLength: 40 }),
        (max, held, steps) => {
          const cap = new SessionCapacity(max, () => held);
          for (const n of steps) {
            const before = cap.reserved;
            if (n === undefined) {
              const got = cap.tryReserve();
              expect(got).toBe(held + before < max);
              expect(cap.reserved).toBe(got ? before + 1 : before);
            } else {
              cap.release(n);
              expect(cap.reserved).toBe(Math.max(0, before - n));
            }
            expect(cap.reserved).toBeGreaterThanOrEqual(0);
            if (held >= max) expect(cap.reserved).toBe(0);
            else expect(held + cap.reserved).toBeLessThanOrEqual(max);
          }
        },
      ),
    );
  });
});

describe('CapacityGate', () => {
  it('plans sharing one cap: the instance reserves exactly what the plans took, never past the cap, and releasing each plan restores the count', () => {
    fc.assert(
      fc.property(fc.nat({ max: 6 }), fc.nat({ max: 8 }), ops(3), (max, held, steps) => {
        const cap = new SessionCapacity(max, () => held);
        const gates = [0, 1, 2].map(() => new CapacityGate(cap, new RefusedFilter(), null));
        for (const op of steps) {
          const gate = gates[op.plan]!;
          if (op.kind === 'take') {
            const free = held + cap.reserved < max;
            expect(gate.take()).toBe(free);
          } else if (op.kind === 'giveBack') {
            // Only a place the plan took is given back.
            if (gate.reserved > 0) gate.giveBack();
          } else {
            const others = cap.reserved - gate.reserved;
            gate.release();
            expect(gate.reserved).toBe(0);
            expect(cap.reserved).toBe(others);
          }
          expect(cap.reserved).toBe(gates.reduce((n, g) => n + g.reserved, 0));
          if (held >= max) expect(cap.reserved).toBe(0);
          else expect(held + cap.reserved).toBeLessThanOrEqual(max);
        }
        for (const g of gates) g.release();
        expect(cap.reserved).toBe(0);
      }),
    );
  });

  it('gives every session a place without a cap, and holds none', () => {
    const gate = new CapacityGate(undefined, undefined, null);
    for (let i = 0; i < 5; i++) expect(gate.take()).toBe(true);
    gate.giveBack();
    expect(gate.reserved).toBe(0);
    expect(gate.max).toBe(Infinity);
    expect(gate.startsBlind('anyone')).toBe(false);
    expect(gate.refused).toBeNull();
  });

  it('at the cap, refuses a session: counts each event, marks the session once, in the plan’s own copy of the filter', () => {
    const filter = new RefusedFilter();
    const gate = new CapacityGate(new SessionCapacity(0, () => 0), filter, ring.engine);
    expect(gate.take()).toBe(false);
    expect(gate.refuse(inBand('late'))).toBe(true);
    expect(gate.refuse(inBand('late'))).toBe(true);
    expect(gate.atCapacity).toEqual({ events: 2, sessions: 1 });
    expect(gate.startsBlind('late')).toBe(true);
    expect(filter.has('late')).toBe(false); // only once the plan commits
    gate.refused!.commit();
    expect(filter.has('late')).toBe(true);
  });

  it('at the cap, an unauthorized out-of-band event is counted but does not mark its session refused', () => {
    const gate = new CapacityGate(
      new SessionCapacity(0, () => 0),
      new RefusedFilter(),
      ring.engine,
    );
    expect(gate.refuse(outOfBand('victim'))).toBe(false);
    expect(gate.atCapacity).toEqual({ events: 1, sessions: 0 });
    expect(gate.startsBlind('victim')).toBe(false);
  });

  it('without a key ring, an out-of-band event needs no signature: it marks its session refused at the cap', () => {
    const gate = new CapacityGate(new SessionCapacity(0, () => 0), new RefusedFilter(), null);
    expect(gate.refuse(outOfBand('s'))).toBe(true);
    expect(gate.atCapacity).toEqual({ events: 1, sessions: 1 });
    expect(gate.startsBlind('s')).toBe(true);
  });

  it('a session freed by the sweep starts blind if it comes back (docs/decisions.md 124)', () => {
    const gate = new CapacityGate(new SessionCapacity(10, () => 0), new RefusedFilter(), null);
    expect(gate.startsBlind('gone')).toBe(false);
    gate.freed('gone');
    expect(gate.startsBlind('gone')).toBe(true);
    expect(gate.atCapacity).toEqual({ events: 0, sessions: 0 });
  });
});

describe('createsSession', () => {
  it('an out-of-band event the engine found unauthorized creates no session; anything else may', () => {
    expect(createsSession(outOfBand('s'), ['unauthorized'])).toBe(false);
    expect(createsSession(outOfBand('s'), [])).toBe(true);
    expect(createsSession(inBand('s'), ['unauthorized'])).toBe(true);
    expect(createsSession(inBand('s'), [])).toBe(true);
  });
});
