/**
 * The rev 11 generators reach what the property tests built on them claim to cover: run through
 * the reference model on fixed samples, their streams drop states in event time, contest
 * policies, fail every authority check, heal blind states, coarsen every range set (and K) and
 * report lists cut at 16 ranges. A generator change that loses one of these fails here rather
 * than leaving a property quietly vacuous.
 */
import fc from 'fast-check';
import type { EngineInput } from '../../src/engine';
import {
  SMALL_GRACE_MS,
  SMALL_IDLE_MS,
  keylessStream,
  rev11Stream,
  unknownRev11Stream,
} from '../support/arbitraries';
import { buildFragmenting, fragmentingPlan } from '../support/fragmentingStream';
import { ReferenceSession, universeFor } from '../support/referenceModel';
import { testRing } from '../support/testRing';

/** What happened, counted by name, over samples run through the model. */
function tally(
  samples: { roles: Parameters<typeof testRing>[0]; events: EngineInput[] }[],
  opts: { small: boolean; blind?: boolean },
): Map<string, number> {
  const seen = new Map<string, number>();
  const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
  for (const { roles, events } of samples) {
    const m = new ReferenceSession(
      universeFor(events, opts.blind),
      {
        ...(opts.small ? { graceMs: SMALL_GRACE_MS, idleMs: SMALL_IDLE_MS } : {}),
        ring: testRing(roles).model,
      },
      opts.blind ? 'blind' : 'empty',
    );
    for (const e of events) {
      const [known, closed] = [m.s.policy !== null, m.s.closedAt !== null];
      const out = m.step(e, 0);
      if (known && m.s.policy === null)
        count(closed ? 'closed state dropped' : 'idle state dropped');
      for (const o of out) {
        if (o.record === 'audit') {
          count(o.value.code);
          if (o.value.failed) count(`unauthorized: ${o.value.failed}`);
          for (const set of o.value.sets ?? []) count(`coarsened ${set}`);
          if (o.value.ranges.length === 16) count('audit ranges cut at 16');
        }
        if (o.record === 'verdict') {
          const v = o.value;
          count(`${v.decision} ${v.basis ?? v.action}`);
          if (v.reasons.some((r) => r.holes.length === 16)) count('holes cut at 16');
          if (m.s.policy && v.reasons.some((r) => r.code === 'UNKNOWN_SESSION'))
            count('contested policy refused');
          if (opts.blind && m.s.F && v.decision === 'APPROVE') count('blind state approved');
        }
      }
    }
  }
  return seen;
}

const keysOf = (m: Map<string, number>) => [...m.keys()];

describe('the rev 11 generators reach what the properties claim', () => {
  it('rev11Stream: idle and grace drops, contested policies, every failed authority check, every basis', () => {
    const seen = tally(fc.sample(rev11Stream, { numRuns: 60, seed: 11 }), { small: true });
    expect(keysOf(seen)).toEqual(
      expect.arrayContaining([
        'idle state dropped',
        'closed state dropped',
        'contested policy refused',
        'unauthorized: no signature',
        'unauthorized: unknown key',
        'unauthorized: key without the role',
        'unauthorized: bad signature',
        'unauthorized: expired',
        'APPROVE INVARIANT_HOLDS',
        'APPROVE LOSSLESS_SPILL',
        'APPROVE LOSS_ACKNOWLEDGED',
        'REFUSE SPILL',
        'REFUSE HALT',
      ]),
    );
  });

  it('unknownRev11Stream from a blind state: some requests are healed and approved', () => {
    const samples = fc.sample(unknownRev11Stream, { numRuns: 40, seed: 11 });
    expect(
      tally(samples, { small: true, blind: true }).get('blind state approved'),
    ).toBeGreaterThan(0);
  });

  it('keylessStream: its junk fails every authority check', () => {
    const samples = fc.sample(keylessStream, { numRuns: 40, seed: 11 });
    expect(keysOf(tally(samples, { small: true }))).toEqual(
      expect.arrayContaining([
        'unauthorized: no signature',
        'unauthorized: unknown key',
        'unauthorized: key without the role',
        'unauthorized: bad signature',
        'unauthorized: expired',
      ]),
    );
  });

  it('fragmentingPlan: every range set and K coarsened, reported lists cut at 16', () => {
    const samples = fc
      .sample(fragmentingPlan, { numRuns: 8, seed: 1 })
      .map((plan) => ({ roles: plan.roles, events: buildFragmenting(plan) }));
    expect(keysOf(tally(samples, { small: false }))).toEqual(
      expect.arrayContaining([
        'coarsened pins',
        'coarsened T',
        'coarsened S',
        'coarsened A0',
        'coarsened P',
        'coarsened X',
        'coarsened K',
        'holes cut at 16',
        'audit ranges cut at 16',
      ]),
    );
  });
});
