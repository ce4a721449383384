/**
 * contract §8 under faults: hard kills (SIGKILL of the CLI process), rebalances, the schema
 * registry going away, and bad input. Every scenario checks, with a read_committed consumer,
 * that each verdict / spill request / audit record the offline audit of the same events
 * expects is there exactly once (lost 0, duplicated 0), and prints its figures to stderr.
 *
 * Env CG_FAULT_CYCLES: kill/restart cycles (default 20; the whole file takes about 3 to 4
 * minutes on a loaded 2-core machine).
 * A broker restart: test/integration/broker-restart.test.ts (it needs a broker of its own).
 */
import { Rng } from '../../src/sim';
import type { ContextEvent } from '../../src/engine/events';
import { verdictType } from '../../src/schema/schemas';
import { registerSchemas } from '../../src/registry/register';
import { withHeader } from '../../src/registry/wireFormat';
import { seedIncident } from '../support/sessionBuilder';
import {
  codecFor,
  liveFleet,
  offline,
  produceEvents,
  produceRaw,
  start,
  testConfig,
} from './pipeline';
import {
  drain,
  exactlyOnce,
  expectExactlyOnce,
  faultLogFile,
  httpStatus,
  killHard,
  report,
  sleep,
  spawnProcessor,
  startRegistryProxy,
  waitAllCommitted,
  waitFor,
  type Child,
  exactlyOnceFigures,
} from './faults/harness';

jest.setTimeout(420_000);

const CYCLES = Number(process.env.CG_FAULT_CYCLES ?? 20);

function chunks<T>(xs: readonly T[], n: number): T[][] {
  const size = Math.ceil(xs.length / n);
  return Array.from({ length: n }, (_, i) => xs.slice(i * size, (i + 1) * size));
}

describe('contract §8 under faults', () => {
  it(`hard kills: ${CYCLES} SIGKILL/restart cycles of the CLI process, then exactly once`, async () => {
    const started = Date.now();
    const c = testConfig({ partitions: 3, sessionTimeoutMs: 6_000, transactionTimeoutMs: 5_000 });
    const { events } = liveFleet({
      sessions: 30,
      events: 3_000,
      seed: 101,
      faultyShare: 0.3,
    });
    const parts = chunks(events, Math.max(1, CYCLES)); // a new chunk in every cycle
    const codec = codecFor(c);
    const rng = new Rng(4242);
    const log = faultLogFile('kill');
    const kills: { cycle: number; afterMs: number; ready: boolean }[] = [];
    let child: Child | null = null;
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        child = await spawnProcessor(c, log);
        const spawnedAt = Date.now();
        const ready = async () => (await httpStatus(child!.httpPort, '/readyz')) === 200;
        // The first instance creates the topics; later chunks go in while an instance runs.
        if (cycle === 0) await waitFor('the first instance to be ready', ready, 120_000);
        const chunk = parts[cycle];
        if (chunk) await produceEvents(c, chunk, codec);
        // Odd cycles: a random point of start-up (joining, fencing, restoring) or of work.
        // Even cycles: once ready, a random point while batches are being processed.
        if (cycle % 2 === 0) {
          await waitFor('the instance to be ready', ready, 120_000).catch(() => undefined);
          await sleep(200 + rng.next() * 2_500);
        } else {
          await sleep(300 + rng.next() * 6_000);
        }
        const wasReady = await ready().catch(() => false);
        await killHard(child);
        kills.push({ cycle, afterMs: Date.now() - spawnedAt, ready: wasReady });
      }
      for (const chunk of parts.slice(CYCLES)) await produceEvents(c, chunk, codec);
      child = await spawnProcessor(c, log);
      await waitAllCommitted(c, 180_000);
      const r = await exactlyOnce(c, events, 90_000);
      // Evidence that kills hit open transactions: what read_uncommitted sees on top.
      const outputs = [c.verdictTopic, c.spillTopic, c.auditTopic];
      const uncommitted = await drain(outputs, r.records, 2_000, 60_000, true);
      report('hard kills', {
        cycles: CYCLES,
        killedWhileReady: kills.filter((k) => k.ready).length,
        events: events.length,
        ...exactlyOnceFigures(r),
        abortedOutputRecords: uncommitted.length - r.records,
        seconds: Math.round((Date.now() - started) / 1000),
        log,
      });
      expectExactlyOnce(r);
    } finally {
      if (child) {
        child.proc.kill('SIGTERM');
        await Promise.race([child.exited, sleep(15_000)]);
        await killHard(child);
      }
    }
  });

  it('rebalances: three in-process instances joining and leaving under load, then exactly once', async () => {
    const started = Date.now();
    const c = testConfig({ partitions: 4 });
    const { events } = liveFleet({
      sessions: 40,
      events: 3_000,
      seed: 202,
      faultyShare: 0.3,
    });
    const parts = chunks(events, 6);
    const codec = codecFor(c);
    const a = await start(c);
    const instances = [a];
    let rebalances = 0;
    try {
      await produceEvents(c, parts[0]!, codec);
      const b = await start(c);
      instances.push(b);
      rebalances++;
      await produceEvents(c, parts[1]!, codec);
      const d = await start(c);
      instances.push(d);
      rebalances++;
      await produceEvents(c, parts[2]!, codec);
      await sleep(1_500);
      await a.stop(); // leaves mid-load: its partitions move with their state
      rebalances++;
      await produceEvents(c, parts[3]!, codec);
      const e = await start(c);
      instances.push(e);
      rebalances++;
      await produceEvents(c, parts[4]!, codec);
      await b.stop();
      rebalances++;
      await produceEvents(c, parts[5]!, codec);
      await d.stop();
      rebalances++;
      await waitAllCommitted(c, 180_000);
      const r = await exactlyOnce(c, events, 90_000);
      report('rebalances', {
        instances: 4,
        rebalances,
        events: events.length,
        records: r.records,
        verdicts: r.verdicts,
        spillRequests: r.spills,
        lost: r.lost,
        duplicated: r.duplicated,
        seconds: Math.round((Date.now() - started) / 1000),
      });
      expectExactlyOnce(r);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  });

  it('registry unavailable (503, then connection refused): no dead letters, processing resumes', async () => {
    const started = Date.now();
    const base = testConfig({ partitions: 2 });
    const proxy = await startRegistryProxy(base.registryUrl!);
    const c = { ...base, registryUrl: proxy.url };
    const { events } = liveFleet({
      sessions: 20,
      events: 1_500,
      seed: 303,
      faultyShare: 0.3,
    });
    // The producer registers and encodes through the real registry; the processor only
    // through the proxy, and it has not fetched the writer's schema yet.
    const producerCodec = codecFor(base);
    const running = await start(c);
    try {
      await proxy.set('503');
      await produceEvents(base, events.slice(0, 1_000), producerCodec);
      await sleep(8_000);
      const readyDuring503 = await httpStatus(running.httpPort, '/readyz');
      await proxy.set('refused');
      await produceEvents(base, events.slice(1_000), producerCodec);
      await sleep(8_000);
      const healthz = await httpStatus(running.httpPort, '/healthz');
      const readyWhileRefused = await httpStatus(running.httpPort, '/readyz');
      const during = await drain([c.verdictTopic, c.dlqTopic], 0, 1_000, 5_000);
      expect(healthz).toBe(200);
      // Readiness reports the outage: input waits for a schema it cannot fetch.
      expect([readyDuring503, readyWhileRefused]).toEqual([503, 503]);
      expect(during).toHaveLength(0); // nothing decided, nothing dead-lettered while it is down
      const failedCalls = proxy.requests.failed;
      await proxy.set('up');
      await waitAllCommitted(c, 180_000);
      expect(await httpStatus(running.httpPort, '/readyz')).toBe(200);
      const r = await exactlyOnce(c, events, 90_000);
      const dlq = await drain([c.dlqTopic], 0, 1_000, 5_000);
      report('registry unavailable', {
        outageSeconds: 16,
        failedRegistryCalls: failedCalls,
        readyzDuringOutage: [readyDuring503, readyWhileRefused],
        events: events.length,
        records: r.records,
        lost: r.lost,
        duplicated: r.duplicated,
        deadLetters: dlq.length,
        seconds: Math.round((Date.now() - started) / 1000),
      });
      expect(failedCalls).toBeGreaterThan(0);
      expect(dlq).toHaveLength(0);
      expectExactlyOnce(r);
    } finally {
      await running.stop();
      await proxy.close();
    }
  });

  it('bad input: every bad record in the DLQ with its code, the processor keeps going', async () => {
    const started = Date.now();
    const c = testConfig({ partitions: 3 });
    const codec = codecFor(c);
    const running = await start(c);
    const rng = new Rng(5150);
    const bytes = (n: number) =>
      Buffer.from(Array.from({ length: n }, () => Math.floor(rng.next() * 256)));
    try {
      await registerSchemas(codec, c.registryUrl);
      const seed = seedIncident('fuzz-seed');
      const first = seed.events[0]!;
      const turn = seed.events[1]!;
      const json = (o: unknown) => Buffer.from(JSON.stringify(o));
      /** [key, value, expected code or null for "any code"] */
      const bad: [string, Buffer, string | null][] = [];
      for (let i = 0; i < 40; i++)
        bad.push([`fuzz-rand-${i}`, bytes(1 + Math.floor(rng.next() * 200)), null]);
      const avro = codec.encodeEvent(turn);
      for (let i = 0; i < 15; i++)
        bad.push([
          turn.sessionId,
          avro.subarray(0, 1 + Math.floor(rng.next() * (avro.length - 1))),
          'AVRO_DECODE',
        ]);
      bad.push([
        'fuzz-unknown-id',
        Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0, 2, 4, 6]),
        'AVRO_DECODE',
      ]);
      // A schema id that exists, of another subject: a verdict in the input topic.
      const [verdict] = offline(seedIncident('fuzz-verdict').events).filter(
        (r) => r.record === 'verdict',
      );
      if (verdict?.record !== 'verdict') throw new Error('no verdict in the seed scenario');
      const { record: _r, ...verdictValue } = verdict;
      const verdictId = codec.encodeVerdict(verdictValue).readInt32BE(1);
      bad.push([
        'fuzz-verdict',
        withHeader(verdictId, verdictType.toBuffer(verdictValue)),
        'AVRO_DECODE',
      ]);
      // 900 KB, under the broker's default 1 MiB message.max.bytes, with an unknown type.
      bad.push([
        'fuzz-big',
        json({ ...turn, sessionId: 'fuzz-big', type: `Huge${'x'.repeat(900_000)}` }),
        'UNKNOWN_TYPE',
      ]);
      bad.push([
        'fuzz-big2',
        json({ ...turn, sessionId: 'fuzz-big2', role: 'x'.repeat(900_000) }),
        'BAD_ENUM',
      ]);
      bad.push(['fuzz-json', json({ ...first, sessionId: 'fuzz-json', seq: '0' }), 'WRONG_TYPE']);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', tokens: { start: 0, end: 'ten' } }),
        'WRONG_TYPE',
      ]);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', turn: undefined }),
        'MISSING_FIELD',
      ]);
      bad.push(['fuzz-json', json({ type: 'TurnAppended' }), 'MISSING_FIELD']);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', type: 'Nope' }),
        'UNKNOWN_TYPE',
      ]);
      bad.push(['fuzz-json', json({ ...turn, sessionId: 'fuzz-json', role: 'ROBOT' }), 'BAD_ENUM']);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', seq: -1 }),
        'NEGATIVE_NUMBER',
      ]);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', seq: 1.5 }),
        'NOT_AN_INTEGER',
      ]);
      bad.push([
        'fuzz-json',
        json({ ...turn, sessionId: 'fuzz-json', tokens: { start: 9, end: 3 } }),
        'REVERSED_RANGE',
      ]);
      bad.push(['fuzz-json', json([1, 2, 3]), 'NOT_AN_OBJECT']);
      bad.push(['fuzz-json', Buffer.from('{"type": "SessionOpened", '), 'NOT_JSON']);
      bad.push(['fuzz-json', Buffer.from([0xc3, 0x28, 0x7b]), 'NOT_UTF8']);
      bad.push(['fuzz-json', Buffer.alloc(0), 'EMPTY_VALUE']);
      bad.push(['someone-else', json({ ...turn, sessionId: 'fuzz-json' }), 'KEY_MISMATCH']);
      // A malformed request that identifies itself is dead-lettered and answered (contract §3).
      const request = seed.events.find((e) => e.type === 'CompactionRequested')!;
      bad.push([
        'fuzz-badreq',
        json({ ...request, sessionId: 'fuzz-badreq', seq: 9_999, tailStart: 'soon' }),
        'WRONG_TYPE',
      ]);
      await produceRaw(
        c,
        bad.filter(([, v]) => v.length < 100_000).map(([key, value]) => ({ key, value })),
      );
      for (const [key, value] of bad.filter(([, v]) => v.length >= 100_000))
        await produceRaw(c, [{ key, value }]);

      // Good sessions after the garbage, with duplicate deliveries and events out of order;
      // the oracle is the offline audit of exactly this delivered order.
      const { events: fleet } = liveFleet({
        sessions: 8,
        events: 600,
        seed: 404,
        faultyShare: 0.4,
        sessionPrefix: 'fuzz-good',
      });
      const delivered: ContextEvent[] = [];
      let duplicates = 0;
      let swapped = 0;
      for (const e of fleet) {
        delivered.push(e);
        if (rng.next() < 0.03) {
          delivered.push(e);
          duplicates++;
        }
      }
      for (let i = 0; i + 1 < delivered.length && swapped < 12; i += 37) {
        const x = delivered[i]!;
        const j = delivered.findIndex((y, k) => k > i && y.sessionId === x.sessionId);
        if (j < 0 || j - i > 5) continue;
        delivered[i] = delivered[j]!;
        delivered[j] = x;
        swapped++;
      }
      await produceEvents(c, delivered);
      await produceEvents(c, seed.events, codec);
      const good = [...delivered, ...seed.events];

      await waitAllCommitted(c, 180_000);
      expect(await httpStatus(running.httpPort, '/healthz')).toBe(200);
      const dlq = await drain([c.dlqTopic], bad.length, 2_000, 60_000);
      const byCode: Record<string, number> = {};
      for (const d of dlq) {
        const code = d.headers['cg.error.code'] ?? 'none';
        byCode[code] = (byCode[code] ?? 0) + 1;
      }
      const r = await exactlyOnce(
        c,
        good,
        90_000,
        (v) => v.record !== 'dead-letter' && v.sessionId === 'fuzz-badreq',
      );
      report('bad input', {
        badRecords: bad.length,
        deadLetters: dlq.length,
        byCode,
        goodEvents: good.length,
        duplicateDeliveries: duplicates,
        outOfOrderSwaps: swapped,
        records: r.records,
        lost: r.lost,
        duplicated: r.duplicated,
        seconds: Math.round((Date.now() - started) / 1000),
      });
      expect(dlq).toHaveLength(bad.length);
      expect(
        dlq.every(
          (d) => d.headers['cg.source.topic'] === c.inputTopic && d.headers['cg.error.message'],
        ),
      ).toBe(true);
      const want = (code: string | null, key: string, value: Buffer) => ({
        key,
        value: value.toString('base64'),
        code,
      });
      const gotDead = dlq.map((d) =>
        want(d.headers['cg.error.code'] ?? null, d.key ?? '', d.value ?? Buffer.alloc(0)),
      );
      for (const [key, value, code] of bad) {
        const match = gotDead.find(
          (g) =>
            g.key === key &&
            g.value === value.toString('base64') &&
            (code === null || g.code === code),
        );
        expect({ key, code, found: match !== undefined }).toEqual({ key, code, found: true });
      }
      // The malformed request is answered: REFUSE / INVALID_REQUEST / HALT, on top of the oracle.
      expect(r.extra).toHaveLength(1);
      expect(r.extra[0]).toMatchObject({
        record: 'verdict',
        inputSeq: 9_999,
        decision: 'REFUSE',
        action: 'HALT',
        rulesChecked: ['INVALID_REQUEST'],
      });
      expectExactlyOnce(r);
      const seedVerdict = r.decoded.find(
        (v) => v.record === 'verdict' && v.sessionId === 'fuzz-seed',
      );
      expect(seedVerdict).toMatchObject({ decision: 'REFUSE' });
    } finally {
      await running.stop();
    }
  });
  it('a fetched batch of bad records near the 1 MiB limit still fits the DLQ (headers add bytes)', async () => {
    const c = testConfig({ partitions: 1 });
    const running = await start(c);
    try {
      // One input record batch just under message.max.bytes (1048588): ten not-JSON values.
      const values = Array.from({ length: 10 }, (_, i) => Buffer.from(`${i}`.padEnd(104_750, 'x')));
      await produceRaw(
        c,
        values.map((value) => ({ key: 'near-limit', value })),
      );
      const dlq = await drain([c.dlqTopic], values.length, 1_000, 60_000);
      report('near-limit batch', { deadLetters: dlq.length });
      expect(dlq).toHaveLength(values.length);
      expect(await httpStatus(running.httpPort, '/healthz')).toBe(200);
    } finally {
      await running.stop();
    }
  });
});
