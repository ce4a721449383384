/**
 * No output record exceeds 64 KiB, whatever the input within the bounds of contract §3 (ids of
 * 256 bytes, a spillRequestId of 1,024, free texts of 4,096, 16 pins per turn) and however it
 * fragments the state (§4a keeps 128 ranges per set, §6 reports 16 per list): every record a
 * batch's plan writes (verdicts, spill requests, audit records, dead letters, changelog
 * records) is measured as the broker counts it (key, value, headers).
 */
import fc from 'fast-check';
import type { ContextEvent, Pin, Policy, Unit } from '../../src/engine/events';
import { decodeForBatch } from '../../src/kafka/batch/decoder';
import { PlanLessons, type PlanContext } from '../../src/kafka/batch/plan';
import { planBatch } from '../../src/kafka/batch/planBatch';
import { estimatedBytes } from '../../src/kafka/outputChunks';
import type { RawRecord } from '../../src/kafka/records';
import type { RegistryCodec } from '../../src/registry/codec';
import { SEED_POLICY, SessionBuilder } from '../support/sessionBuilder';
import { planContext } from '../support/planContext';

const BOUND = 64 * 1024;
const PINS: Pin[] = Array.from(
  { length: 16 },
  (_, i) => (['CONSTRAINT', 'PLAN', 'COMMITMENT', 'OPEN_TOOL_CALL'] as const)[i % 4]!,
);

/** A text of exactly `bytes` UTF-8 bytes, distinct per `tag`, with multi-byte characters. */
function text(bytes: number, tag: string): string {
  const head = `${tag}:`;
  const room = bytes - Buffer.byteLength(head);
  return head + 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2);
}

interface Shape {
  /** Without its SessionOpened the session stays unknown: P, A1, X, K per unit, all three. */
  opened: boolean;
  unit: Unit;
  spill: Policy['spill'];
  coverage: Policy['coverage'];
  turns: number;
  pinEvery: number;
  truncations: number;
  spills: number;
  acks: number;
  requests: number;
}

/** One session built to fragment every set and to carry the longest texts the bounds allow. */
function hostileSession(index: number, s: Shape): ContextEvent[] {
  const id = text(256, `session-${index}`);
  const policy: Policy = {
    ...SEED_POLICY,
    floor: { unit: s.unit, span: 4 },
    truncatorUnit: s.unit,
    spill: s.spill,
    coverage: s.coverage,
  };
  const b = new SessionBuilder(id, 1_767_225_600_000);
  if (s.opened) b.open(policy);
  const UNITS: Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];
  const unitOf = (i: number) => (s.opened ? s.unit : UNITS[i % 3]!);
  for (let t = 0; t < s.turns; t++) b.turn(10, 'USER', t % s.pinEvery === 0 ? PINS : [], 1);
  const end = s.unit === 'TURNS' ? s.turns : s.unit === 'TOKENS' ? s.turns * 10 : s.turns;
  const step = s.unit === 'TOKENS' ? 10 : 1;
  // Every other position truncated, spilled, acknowledged: hundreds of ranges in T, P, A.
  for (let i = 0; i < s.truncations; i++) b.truncate(s.unit, 2 * i * step, 2 * i * step + 1);
  for (let i = 0; i < s.spills; i++) {
    b.outOfBand().emit('SpillCompleted', {
      spillRequestId: text(1024, `spill-${i}`),
      handle: text(4096, `s3://h-${i}`),
      unit: unitOf(i),
      range: { start: (2 * i + 1) * step, end: (2 * i + 1) * step + 1 },
    });
  }
  for (let i = 0; i < s.acks; i++) {
    b.outOfBand().emit('LossAcknowledged', {
      unit: unitOf(i),
      range: { start: 4 * i * step, end: 4 * i * step + 1 },
      by: text(4096, `by-${i}`),
      reason: text(4096, `reason-${i}`),
    });
  }
  for (let r = 0; r < s.requests; r++) {
    const requestId = text(256, `request-${r % 2}`); // repeated: REQUEST_ID_REUSED too
    b.request(requestId, s.unit, 0, Math.floor(end / 2), Math.max(0, end - 4 - r));
  }
  b.spillFailed(text(1024, 'spill-failed'), text(4096, 'error'));
  b.request(text(256, 'after-failure'), s.unit, 0, end, end);
  b.commit(text(256, 'after-failure'), s.unit, 0, end, end);
  // Event ids at their bound.
  return b.events.map((e, i) => ({ ...e, eventId: text(256, `event-${index}-${i}`) }));
}

/** Records the decoder rejects, each within the bounds: dead letters of the same sizes. */
function malformed(events: readonly ContextEvent[]): RawRecord[] {
  const e = events[events.length - 2]!;
  const json = JSON.stringify(e);
  return [
    { key: Buffer.from(text(256, 'another-key')), value: Buffer.from(json), offset: '' },
    {
      key: Buffer.from(e.sessionId),
      value: Buffer.from(json.replace(/"type":"[A-Za-z]+"/, '"type":"Nope"')),
      offset: '',
    },
    {
      key: Buffer.from(e.sessionId),
      value: Buffer.from(json.replace(/"seq":\d+/, '"seq":-1')),
      offset: '',
    },
  ];
}

const shape: fc.Arbitrary<Shape> = fc.record({
  opened: fc.boolean(),
  unit: fc.constantFrom<Unit>('TURNS', 'TOKENS', 'MESSAGES'),
  spill: fc.constantFrom<Policy['spill']>('ENABLED', 'DISABLED'),
  coverage: fc.constantFrom<Policy['coverage']>('STRICT', 'PINNED'),
  turns: fc.integer({ min: 40, max: 400 }),
  pinEvery: fc.integer({ min: 2, max: 3 }),
  truncations: fc.integer({ min: 0, max: 200 }),
  spills: fc.integer({ min: 0, max: 160 }),
  acks: fc.integer({ min: 0, max: 80 }),
  requests: fc.integer({ min: 1, max: 20 }),
});

// The registry codec's 5-byte header is left out of the sizes; 5 bytes do not matter here.
const context = (): PlanContext & { lessons: PlanLessons } => ({
  ...planContext(),
  lessons: new PlanLessons(),
});

describe('output records of hostile input within the bounds', () => {
  it('are at most 64 KiB each, every topic', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(shape, { minLength: 1, maxLength: 2 }), async (shapes) => {
        const events = shapes.flatMap((s, i) => hostileSession(i, s));
        const records: RawRecord[] = [
          ...events.map((e) => ({
            key: Buffer.from(e.sessionId),
            value: Buffer.from(JSON.stringify(e)),
            offset: '',
          })),
          ...malformed(events),
        ].map((r, i) => ({ ...r, offset: String(i) }));
        const largest = Math.max(...records.map((r) => r.key!.length + r.value!.length));
        const plan = await planBatch(
          { topic: 'agent.context-changes', partition: 0 },
          records,
          String(records.length),
          context(),
          (m) => decodeForBatch(m, 'json', {} as RegistryCodec),
        );
        let count = 0;
        for (const [topic, messages] of plan.sends)
          for (const m of messages) {
            count++;
            const bytes = estimatedBytes(m);
            if (bytes > BOUND) throw new Error(`${topic}: a record of ${bytes} bytes`);
          }
        expect(count).toBe(plan.records);
        // The input records themselves were far below the bound: this is about the outputs.
        expect(largest).toBeLessThan(20_000);
        expect(plan.sends.get('dlq')?.length ?? 0).toBeGreaterThanOrEqual(3);
      }),
      { numRuns: 12 },
    );
  });
});
