/**
 * Differential test: the engine against an independent, naive model of contract §3–§6
 * (test/support/referenceModel.ts: boolean arrays, its own authority check), compared output for
 * output and state for state by test/support/differential.ts. Streams of gaps, conflicts,
 * redeliveries, unknown sessions, spills, acknowledgements, closes and malformed requests under
 * the default options, and streams with rev 11's features under small grace and idle periods, with and without a
 * trusted key ring, from an empty or a blind state, and fragmenting past 128 ranges per set;
 * and rev 12's: junk of any occurredAt for the session and for ids never seen, byte copies of
 * signed events, events at gap seqs far in the future, unknown sessions told of huge ranges.
 */
import fc from 'fast-check';
import {
  SMALL_GRACE_MS,
  SMALL_IDLE_MS,
  type SignedStream,
  bySession,
  chaosStream,
  healingStream,
  memoryStream,
  openedChaosStream,
  rev11Stream,
  rev12Stream,
  unknownHealingStream,
  unknownRev11Stream,
  unknownRev12Stream,
} from '../support/arbitraries';
import { type DiffSetup, differential } from '../support/differential';
import type { EngineInput } from '../../src/engine';
import { buildFragmenting, fragmentingPlan } from '../support/fragmentingStream';
import { testRing } from '../support/testRing';

const SMALL = { graceMs: SMALL_GRACE_MS, idleMs: SMALL_IDLE_MS };

describe('the engine agrees with an independent model of contract §3–§6 (default periods, no key ring)', () => {
  it('on sessions opened first (every rule, every event kind, gaps and conflicts)', () => {
    fc.assert(
      fc.property(openedChaosStream, (events) => void differential(events)),
      { numRuns: 60 },
    );
  });

  it('on any stream (unknown sessions, late or missing SessionOpened, dropped states)', () => {
    fc.assert(
      fc.property(chaosStream, (events) => void differential(events)),
      { numRuns: 40 },
    );
  });

  it('on the ways out of a refusal: spills, spill failures, acknowledgements, commits', () => {
    fc.assert(
      fc.property(healingStream, (events) => void differential(events)),
      { numRuns: 80 },
    );
  });

  it('on unknown sessions healing per unit', () => {
    fc.assert(
      fc.property(unknownHealingStream, (events) => void differential(events)),
      {
        numRuns: 40,
      },
    );
  });

  it('on long sessions: stored verdicts, reused requestIds, the 16 and 32 windows', () => {
    fc.assert(
      fc.property(memoryStream, (events) => void differential(events)),
      { numRuns: 20 },
    );
  });
});

describe('the engine agrees with the model on rev 11 streams', () => {
  const withRing = ({ roles, events }: SignedStream) =>
    void differential(events, { ...SMALL, ring: testRing(roles) });
  const withoutRing = ({ events }: SignedStream) => void differential(events, SMALL);

  it('without a key ring: idle and grace drops in event time, F, contested policies', () => {
    fc.assert(fc.property(rev11Stream, withoutRing), { numRuns: 60 });
  });

  it('with a key ring: every kind of signature, replays, in band and out of band', () => {
    fc.assert(fc.property(rev11Stream, withRing), { numRuns: 60 });
  });

  it('from a blind state (unknown, F at 2^52 − 1), with and without a key ring', () => {
    fc.assert(
      fc.property(
        unknownRev11Stream,
        fc.boolean(),
        ({ roles, events }, ring) =>
          void differential(events, {
            ...SMALL,
            ring: ring ? testRing(roles) : null,
            start: 'blind',
          }),
      ),
      { numRuns: 60 },
    );
  });

  it('on sets fragmented past 128 ranges (coarsening, K) and reports past 16 ranges', () => {
    fc.assert(
      fc.property(
        fragmentingPlan,
        fc.boolean(),
        (plan, ring) =>
          void differential(buildFragmenting(plan), { ring: ring ? testRing(plan.roles) : null }),
      ),
      { numRuns: 5 },
    );
  });
});

describe('the engine agrees with the model on rev 12 streams', () => {
  /** Each session of the stream on its own (junk may name sessions never seen). */
  const perSession = (events: readonly EngineInput[], setup: DiffSetup) => {
    for (const list of bySession(events).values()) differential(list, setup);
  };

  it('with a key ring: junk at any time and for ids never seen, byte copies, leaps to 2^52 − 1, huge ranges', () => {
    fc.assert(
      fc.property(rev12Stream, ({ roles, events }) =>
        perSession(events, { ...SMALL, ring: testRing(roles) }),
      ),
      { numRuns: 60 },
    );
  });

  it('without a key ring: the same streams, every record applied', () => {
    fc.assert(
      fc.property(rev12Stream, ({ events }) => perSession(events, SMALL)),
      { numRuns: 40 },
    );
  });

  it('unknown and blind sessions: spills and acknowledgements up to 2^52 − 1 clipped to the extent E', () => {
    fc.assert(
      fc.property(
        unknownRev12Stream,
        fc.boolean(),
        fc.boolean(),
        ({ roles, events }, ring, blind) =>
          perSession(events, {
            ...SMALL,
            ring: ring ? testRing(roles) : null,
            start: blind ? 'blind' : 'empty',
          }),
      ),
      { numRuns: 60 },
    );
  });
});
