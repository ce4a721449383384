/**
 * The rev 12 generators (test/support/arbitraries.ts) reach the cases contract rev 12 is about,
 * as the reference model sees them: records failing the authority check that leave no state,
 * junk stamped 0 and 2^52 − 1 on live sessions, events at gap seqs stamped 2^52 − 1 that move no
 * clock, byte copies ignored as redeliveries and copies applied again, gaps and conflicts that
 * expire A1, drops that keep the out-of-band eventIds, an unknown session's spills and
 * acknowledgements clipped to its extent E, answered requests whose eventId did not decode.
 */
import fc from 'fast-check';
import type { EngineInput } from '../../src/engine';
import {
  SMALL_GRACE_MS,
  SMALL_IDLE_MS,
  type SignedStream,
  bySession,
  rev12Stream,
  unknownRev12Stream,
} from '../support/arbitraries';
import { ReferenceSession, TOP, universeFor } from '../support/referenceModel';
import { testRing } from '../support/testRing';

/** What happened, counted by name, over samples run through the model (with a key ring). */
function tally(samples: readonly SignedStream[]): Map<string, number> {
  const seen = new Map<string, number>();
  const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
  for (const { roles, events } of samples) {
    for (const list of bySession(events).values()) {
      const m = new ReferenceSession(universeFor(list), {
        graceMs: SMALL_GRACE_MS,
        idleMs: SMALL_IDLE_MS,
        ring: testRing(roles).model,
      });
      const earlier = new Set<EngineInput>();
      for (const e of list) {
        const before = m.s;
        const [existed, known, at] = [m.exists, before.policy !== null, before.lastEventAt];
        const ackOnce = Object.values(before.A1).some((b) => b?.includes(1));
        const unknownEnd =
          !known && 'range' in e && e.type !== 'Truncated' ? before.E[e.unit] : null;
        const out = m.step(e, 0);
        const after = m.s;
        const codes = out.map((o) => (o.record === 'audit' ? o.value.code : o.record));
        if (!existed && !m.exists) count('no state left behind');
        if (existed && e.occurredAt === 0 && codes.includes('UNAUTHORIZED_EVENT'))
          count('junk stamped 0 on a live session');
        if (existed && e.occurredAt === TOP && e.seq === null && after.lastEventAt === at)
          count('out-of-band record stamped 2^52 − 1 moved no clock');
        if (existed && e.occurredAt === TOP && e.seq !== null && after.lastEventAt === at)
          count('in-band record stamped 2^52 − 1 moved no clock');
        if (earlier.has(e) && out.length === 0) count('copy ignored as a redelivery');
        if (earlier.has(e) && (codes.includes('LOSS_ACKNOWLEDGED') || codes.includes('verdict')))
          count('copy applied again');
        if (ackOnce && codes.includes('SEQ_CONFLICT')) count('conflict expired A1');
        if (known && after.policy === null && after.oob.length > 0)
          count('drop kept the out-of-band eventIds');
        const applied = !earlier.has(e) && !codes.includes('UNAUTHORIZED_EVENT');
        if (unknownEnd !== null && 'range' in e && e.range.end > unknownEnd && applied)
          count(`unknown ${e.type} clipped to E`);
        for (const o of out)
          if (o.record === 'verdict' && o.value.requestEventId === null)
            count('answered with requestEventId null');
        earlier.add(e);
      }
    }
  }
  return seen;
}

const keysOf = (m: Map<string, number>) => [...m.keys()];

describe('the rev 12 generators reach what the properties claim', () => {
  it('rev12Stream: junk that leaves no state or clock behind, copies, conflicts expiring A1, drops keeping the out-of-band ids', () => {
    const seen = tally(fc.sample(rev12Stream, { numRuns: 80, seed: 12 }));
    expect(keysOf(seen)).toEqual(
      expect.arrayContaining([
        'no state left behind',
        'junk stamped 0 on a live session',
        'out-of-band record stamped 2^52 − 1 moved no clock',
        'in-band record stamped 2^52 − 1 moved no clock',
        'copy ignored as a redelivery',
        'copy applied again',
        'conflict expired A1',
        'drop kept the out-of-band eventIds',
        'answered with requestEventId null',
      ]),
    );
  });

  it('unknownRev12Stream: spills and acknowledgements clipped to the extent E', () => {
    const seen = tally(fc.sample(unknownRev12Stream, { numRuns: 60, seed: 12 }));
    expect(keysOf(seen)).toEqual(
      expect.arrayContaining([
        'unknown SpillCompleted clipped to E',
        'unknown LossAcknowledged clipped to E',
      ]),
    );
  });
});
