/** The processor reports a batch at a time (src/kafka/observers.ts): the counters end where
 * per-event reporting would leave them; the engine-step histogram gets the batch's mean; JSON
 * records decode without the codec as through it. */
import { Registry } from 'prom-client';
import { Fleet } from '../../src/engine';
import type { ContextEvent } from '../../src/engine/events';
import { combineObservers } from '../../src/kafka/observers';
import { EventTally } from '../../src/kafka/processorObserver';
import {
  decodeRecord,
  decodeRecordNow,
  type DeadLetterCode,
  type DecodedRecord,
  type RawRecord,
} from '../../src/kafka/records';
import { Metrics } from '../../src/metrics/metrics';
import type { RegistryCodec } from '../../src/registry/codec';
import { haltThenAcknowledgeExample, seedIncidentExample } from '../support/examples';

/** The examples plus a redelivery, a gap and events of a session never opened. */
function eventsWithNotes(): ContextEvent[] {
  const events = [...seedIncidentExample(), ...haltThenAcknowledgeExample()];
  const last = events[events.length - 1]!;
  const redelivered = events[events.length - 2]!; // recent: still in the remembered eventIds
  const gap = { ...last, seq: last.seq! + 5, eventId: 'gap-1' };
  const orphan = { ...events[2]!, sessionId: 'never-opened', eventId: 'orphan-1' };
  return [...events, redelivered, gap, orphan, { ...orphan, seq: orphan.seq! + 1 }];
}

const COUNTERS = /^compaction_guard_(events|duplicate_events|ignored_events|gaps)_total\b.*$/gm;

describe('batch reporting', () => {
  it('a batch tally leaves the event counters where per-event reporting leaves them', async () => {
    const perEvent = new Metrics(new Registry());
    const batched = new Metrics(new Registry());
    const fleet = new Fleet();
    const tally = new EventTally();
    for (const e of eventsWithNotes()) {
      const r = fleet.process(e, e.occurredAt);
      perEvent.event(e.type, r.notes);
      tally.add(e.type, r.notes);
    }
    batched.batchEvents(tally);
    const a = (await perEvent.registry.metrics()).match(COUNTERS);
    const b = (await batched.registry.metrics()).match(COUNTERS);
    expect(b).toEqual(a);
    // The fixture does exercise every note.
    expect(tally.duplicates).toBeGreaterThan(0);
    expect(tally.gaps).toBeGreaterThan(0);
    expect(tally.ignoredByType.size).toBeGreaterThan(0);
  });

  it('observes the mean engine step once per batch, nothing for a batch without steps', async () => {
    const metrics = new Metrics(new Registry());
    metrics.engineSteps(4, 0.002);
    metrics.engineSteps(0, 0.5);
    const text = await metrics.registry.metrics();
    expect(text).toContain('compaction_guard_engine_step_duration_seconds_count 1');
    expect(text).toContain('compaction_guard_engine_step_duration_seconds_sum 0.0005');
    expect(text).toContain('compaction_guard_engine_step_duration_seconds_bucket{le="0.0005"} 1');
    expect(text).toContain('compaction_guard_engine_step_duration_seconds_bucket{le="0.0001"} 0');
  });

  it('combined observers: each method calls every observer that has it, in order', () => {
    const calls: string[] = [];
    const a = {
      lag: (p: number, n: number) => calls.push(`a.lag ${p} ${n}`),
      rebalance: () => calls.push('a.rebalance'),
    };
    const b = { lag: (p: number, n: number) => calls.push(`b.lag ${p} ${n}`) };
    const both = combineObservers(a, b);
    both.lag?.(2, 7);
    both.rebalance?.();
    expect(both.readiness).toBeUndefined();
    expect(calls).toEqual(['a.lag 2 7', 'b.lag 2 7', 'a.rebalance']);
  });

  it('combined observers forward every method Metrics implements (none dropped by the combination)', () => {
    const metrics = new Metrics(new Registry());
    const combined = combineObservers(metrics, {});
    const implemented = Object.getOwnPropertyNames(Metrics.prototype).filter(
      (k) => k in combined || k === 'kafkaTransaction',
    );
    expect(implemented).toContain('kafkaTransaction');
    for (const k of implemented)
      expect([k, typeof (combined as Record<string, unknown>)[k]]).toEqual([k, 'function']);
  });

  it('combined observers call methods on their own object', async () => {
    const metrics = new Metrics(new Registry());
    combineObservers(metrics, {}).engineSteps?.(1, 0.001);
    expect(await metrics.registry.metrics()).toContain(
      'compaction_guard_engine_step_duration_seconds_count 1',
    );
  });
});

describe('decodeRecordNow', () => {
  const event = seedIncidentExample()[0]!;
  const json = Buffer.from(JSON.stringify(event));
  const key = Buffer.from(event.sessionId);
  /** Each record with what it must decode to: the event, or a dead letter's code. */
  const records: [string, RawRecord, ContextEvent | DeadLetterCode][] = [
    ['a JSON event', { key, value: json, offset: '1' }, event],
    [
      'a key that is not the sessionId',
      { key: Buffer.from('other'), value: json, offset: '2' },
      'KEY_MISMATCH',
    ],
    ['no key', { key: null, value: json, offset: '3' }, 'KEY_MISMATCH'],
    ['a tombstone', { key: Buffer.from('k'), value: null, offset: '4' }, 'EMPTY_VALUE'],
    [
      'an empty value',
      { key: Buffer.from('k'), value: Buffer.alloc(0), offset: '5' },
      'EMPTY_VALUE',
    ],
    [
      'bytes that are not UTF-8',
      { key: null, value: Buffer.from([0x7b, 0xff, 0xfe]), offset: '6' },
      'NOT_UTF8',
    ],
    [
      'a JSON line that is not an event',
      { key: null, value: Buffer.from('[1]'), offset: '7' },
      'NOT_AN_OBJECT',
    ],
    [
      // Kept, as offline (only `audit` skips a file's leading BOM): docs/decisions.md 37.
      'a UTF-8 byte order mark before the JSON',
      { key, value: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]), offset: '8' },
      'NOT_JSON',
    ],
  ];
  const noCodec = {
    decodeEvent: () => {
      throw new Error('JSON needs no codec');
    },
  } as unknown as RegistryCodec;
  const outcome = (d: DecodedRecord | undefined) =>
    d === undefined ? 'undefined' : d.ok ? d.input : d.code;

  it.each(records)(
    'decodes %s to its event or dead-letter code without the registry (json, auto; both functions)',
    async (_what, r, expected) => {
      for (const format of ['json', 'auto'] as const) {
        expect([format, outcome(decodeRecordNow(r, format))]).toEqual([format, expected]);
        // The codec throws if called: decodeRecord must not need the registry for these.
        expect([format, outcome(await decodeRecord(r, format, noCodec))]).toEqual([
          format,
          expected,
        ]);
      }
    },
  );

  it('leaves Avro values (magic byte 0 in auto, any value in avro) to decodeRecord', () => {
    const avro = { key: null, value: Buffer.from([0, 0, 0, 0, 1, 2]), offset: '9' };
    expect(decodeRecordNow(avro, 'auto')).toBeUndefined();
    expect(decodeRecordNow(avro, 'avro')).toBeUndefined();
    expect(decodeRecordNow({ ...avro, value: json }, 'avro')).toBeUndefined();
  });
});
