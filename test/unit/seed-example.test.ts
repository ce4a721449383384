import { Fleet } from '../../src/engine';
import type { Output, Verdict, SpillRequest, AuditRecord } from '../../src/engine';
import { seedIncident } from '../support/sessionBuilder';

function run(events: Parameters<Fleet['process']>[0][]): Output[] {
  const fleet = new Fleet();
  return events.flatMap((e) => fleet.process(e, e.occurredAt ?? 0).outputs);
}
const verdicts = (o: Output[]) =>
  o.filter((x) => x.record === 'verdict').map((x) => x.value as Verdict);
const spills = (o: Output[]) =>
  o.filter((x) => x.record === 'spill-request').map((x) => x.value as SpillRequest);
const audits = (o: Output[]) =>
  o.filter((x) => x.record === 'audit').map((x) => x.value as AuditRecord);

describe("the seed's worked example", () => {
  it('is refused with EVICTED_PINNED and EVICTED_UNCOVERED and asks for a spill naming the evicted turns', () => {
    const b = seedIncident();
    const out = run(b.events);
    const [v] = verdicts(out);
    expect(v).toMatchObject({ decision: 'REFUSE', action: 'SPILL', basis: null });
    expect(v!.reasons.map((r) => r.code)).toEqual(['EVICTED_PINNED', 'EVICTED_UNCOVERED']);
    expect(v!.reasons[0]!.holes).toEqual([{ unit: 'TURNS', start: 1, end: 3 }]);
    expect(v!.reasons[1]!.holes).toEqual([{ unit: 'TURNS', start: 0, end: 8 }]);
    const [s] = spills(out);
    expect(s).toMatchObject({
      unit: 'TURNS',
      range: { start: 0, end: 52 },
      holes: [{ unit: 'TURNS', start: 0, end: 8 }],
    });
    expect(audits(out).map((a) => a.code)).toEqual(['TRIGGER_NOT_BELOW_CEILING', 'PINNED_EVICTED']);
  });

  it('approves the retry with basis LOSSLESS_SPILL once the spill is stored', () => {
    const b = seedIncident();
    const first = run(b.events);
    const id = spills(first)[0]!.spillRequestId;
    b.spilled(id, 'TURNS', 0, 52).request('compact-1', 'TURNS', 8, 40, 40);
    const out = run(b.events);
    const vs = verdicts(out);
    expect(vs).toHaveLength(2);
    expect(vs[1]).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
      action: 'NONE',
      reasons: [],
      diagnostic: null,
    });
  });
});
