/**
 * The processor end to end on the real broker and registry: the seed's scenario, equality with
 * the offline audit, exactly one verdict per request across a restart, DLQ for bad input.
 */
import { createServer, type AddressInfo } from 'node:net';
import { seedIncident } from '../support/sessionBuilder';
import {
  brokers,
  codecFor,
  countOf,
  kafka,
  decodeOutput,
  liveFleet,
  offline,
  produceEvents,
  produceRaw,
  readOutputs,
  readTopics,
  start,
  testConfig,
  verdictMap,
} from './pipeline';

jest.setTimeout(240_000);

describe('processor on a real Kafka', () => {
  it("the seed's scenario: REFUSE + spill request out, spill acknowledgement in, APPROVE out", async () => {
    const c = testConfig();
    const codec = codecFor(c);
    const running = await start(c);
    try {
      const b = seedIncident('seed-e2e');
      await produceEvents(c, b.events, codec);
      const first = await readTopics([c.verdictTopic, c.spillTopic], (rs) => rs.length >= 2);
      const [verdict] = first
        .filter((r) => r.topic === c.verdictTopic)
        .map((r) => decodeOutput(c, r));
      const [spill] = first.filter((r) => r.topic === c.spillTopic).map((r) => decodeOutput(c, r));
      expect(verdict).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
      expect(spill).toMatchObject({ record: 'spill-request', range: { start: 0, end: 52 } });
      if (spill?.record !== 'spill-request') throw new Error('no spill request');
      b.spilled(spill.spillRequestId, 'TURNS', 0, 52).request('compact-1', 'TURNS', 8, 40, 40);
      await produceEvents(c, b.events.slice(-2), codec);
      const all = await readTopics([c.verdictTopic], (rs) => rs.length >= 2);
      const verdicts = all.map((r) => decodeOutput(c, r));
      expect(verdicts[1]).toMatchObject({
        decision: 'APPROVE',
        basis: 'LOSSLESS_SPILL',
        action: 'NONE',
      });
      expect(all.every((r) => r.key === 'seed-e2e')).toBe(true);
    } finally {
      await running.stop();
    }
  });

  it('verdicts of a few thousand simulated events equal the offline audit of the same events', async () => {
    const c = testConfig();
    const { events } = liveFleet({
      sessions: 40,
      events: 4000,
      seed: 7,
      faultyShare: 0.3,
    });
    const expected = offline(events);
    const want = verdictMap(expected);
    const running = await start(c);
    try {
      await produceEvents(c, events, codecFor(c));
      const { got, decoded } = await readOutputs(c, expected.length);
      expect(decoded).toHaveLength(expected.length);
      expect(verdictMap(decoded)).toEqual(want);
      expect(countOf(got, c.spillTopic)).toBe(
        expected.filter((r) => r.record === 'spill-request').length,
      );
    } finally {
      await running.stop();
    }
  });

  it('a restart mid-stream gives exactly one verdict per request and continues from the restored state', async () => {
    const c = testConfig();
    const { events } = liveFleet({
      sessions: 30,
      events: 3000,
      seed: 11,
      faultyShare: 0.3,
    });
    const expected = offline(events);
    const codec = codecFor(c);
    let running = await start(c);
    await produceEvents(c, events.slice(0, 1500), codec);
    await readTopics([c.verdictTopic], (rs) => rs.length >= 5, 30_000);
    await running.stop();
    running = await start(c);
    try {
      await produceEvents(c, events.slice(1500), codec);
      const { decoded } = await readOutputs(c, expected.length);
      expect(decoded).toHaveLength(expected.length);
      expect(verdictMap(decoded)).toEqual(verdictMap(expected));
    } finally {
      await running.stop();
    }
  });

  it('a group offset left behind the restored state (as OffsetFetch can answer after a coordinator failover) reprocesses nothing: the position comes from the changelog', async () => {
    const c = testConfig();
    const { events } = liveFleet({
      sessions: 30,
      events: 3000,
      seed: 13,
      faultyShare: 0.3,
    });
    const expected = offline(events);
    const firstHalf = offline(events.slice(0, 1500));
    const codec = codecFor(c);
    let running = await start(c);
    await produceEvents(c, events.slice(0, 1500), codec);
    await readOutputs(c, firstHalf.length);
    await running.stop();
    // The group's committed offsets back to the start, the changelog untouched.
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.setOffsets({
        groupId: c.groupId,
        topic: c.inputTopic,
        partitions: [0, 1, 2].map((partition) => ({ partition, offset: '0' })),
      });
      const [rewound] = await admin.fetchOffsets({ groupId: c.groupId, topics: [c.inputTopic] });
      expect(rewound!.partitions.map((p) => p.offset)).toEqual(['0', '0', '0']);
    } finally {
      await admin.disconnect();
    }
    running = await start(c);
    try {
      await produceEvents(c, events.slice(1500), codec);
      const { decoded } = await readOutputs(c, expected.length);
      expect(verdictMap(decoded)).toEqual(verdictMap(expected));
      // Nothing beyond the offline audit's records comes later either.
      const all = await readOutputs(c, expected.length + 1, 5_000);
      expect(all.decoded).toHaveLength(expected.length);
    } finally {
      await running.stop();
    }
  });

  it('starts when the first broker of KAFKA_BROKERS is down: the start-up check tries the next one', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const c = testConfig({ brokers: [`127.0.0.1:${closed}`, ...brokers] });
    const { events } = seedIncident('first-broker-down');
    const running = await start(c);
    try {
      await produceEvents(c, events);
      const verdicts = await readTopics([c.verdictTopic], (rs) => rs.length >= 1, 60_000);
      expect(verdicts.map((r) => decodeOutput(c, r))).toMatchObject([
        { decision: 'REFUSE', action: 'SPILL' },
      ]);
    } finally {
      await running.stop();
    }
  });

  it('garbage bytes, an unknown schema id and JSON with wrong types land in the DLQ with their reason; processing continues', async () => {
    const c = testConfig();
    const running = await start(c);
    try {
      const b = seedIncident('dlq-e2e');
      const unknownId = Buffer.from([0, 0x7f, 0xff, 0xff, 0x00, 1, 2, 3]);
      await produceRaw(c, [
        { key: 'dlq-e2e', value: Buffer.from([0xff, 0xfe, 0x00, 0x13]) },
        { key: 'dlq-e2e', value: unknownId },
        { key: 'dlq-e2e', value: JSON.stringify({ ...b.events[1], turn: 'one' }) },
      ]);
      await produceEvents(c, b.events);
      const got = await readTopics([c.dlqTopic, c.verdictTopic], (rs) => rs.length >= 4);
      const dead = got.filter((r) => r.topic === c.dlqTopic);
      expect(dead.map((d) => d.headers['cg.error.code'])).toEqual([
        'NOT_UTF8',
        'AVRO_DECODE',
        'WRONG_TYPE',
      ]);
      expect(dead[2]!.headers['cg.error.message']).toContain('turn');
      expect(
        dead.every(
          (d) =>
            d.headers['cg.source.topic'] === c.inputTopic &&
            d.headers['cg.source.offset'] !== undefined,
        ),
      ).toBe(true);
      expect(dead[1]!.value).toEqual(unknownId);
      const [verdict] = got
        .filter((r) => r.topic === c.verdictTopic)
        .map((r) => decodeOutput(c, r));
      expect(verdict).toMatchObject({ decision: 'REFUSE' });
    } finally {
      await running.stop();
    }
  });
});

describe('scale-out', () => {
  it('two instances started together split the partitions and together produce the same verdicts as one', async () => {
    const c = testConfig({ partitions: 4 });
    const { events } = liveFleet({
      sessions: 40,
      events: 3000,
      seed: 23,
      faultyShare: 0.3,
    });
    const expected = offline(events);
    // Started together on fresh topics: they race to create topics and schema subjects.
    const [a, b] = await Promise.all([start(c), start(c)]);
    try {
      await produceEvents(c, events, codecFor(c));
      const { decoded } = await readOutputs(c, expected.length);
      expect(verdictMap(decoded)).toEqual(verdictMap(expected));
      expect(decoded).toHaveLength(expected.length);
      const owned = [a, b].map((r) => [...r.processor.partitions().keys()].sort());
      expect(owned[0]!.length).toBeGreaterThan(0);
      expect(owned[1]!.length).toBeGreaterThan(0);
      expect([...owned[0]!, ...owned[1]!].sort()).toEqual([0, 1, 2, 3]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
