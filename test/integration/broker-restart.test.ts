/**
 * contract §8 "after ... a broker restart": a dedicated local broker (not the suite's shared one)
 * is stopped and started again on the same ports with the same data while the processor runs
 * under load; the processor recovers by itself, and a read_committed reader sees every
 * verdict, spill request and audit record of the offline audit exactly once.
 */
import { startLocalKafka, type LocalKafka } from '../../src/services/localKafka';
import { cacheDir, DEFAULT_KAFKA_VERSION } from '../../src/services/maven';

jest.setTimeout(420_000);

describe('contract §8 under a broker restart', () => {
  let broker: LocalKafka;

  beforeAll(async () => {
    broker = await startLocalKafka({
      cacheDir: cacheDir(),
      version: DEFAULT_KAFKA_VERSION,
      startTimeoutMs: 180_000,
    });
    // The pipeline helpers read KAFKA_BROKERS when first loaded: point them at this broker.
    process.env.KAFKA_BROKERS = broker.brokers.join(',');
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it('the processor recovers by itself and every output is there exactly once', async () => {
    const { codecFor, liveFleet, produceEvents, start, testConfig } = await import('./pipeline');
    const { exactlyOnce, expectExactlyOnce, report, sleep, waitAllCommitted } =
      await import('./faults/harness');
    const started = Date.now();
    const c = testConfig({ partitions: 3, sessionTimeoutMs: 6_000, transactionTimeoutMs: 5_000 });
    expect(c.brokers).toEqual(broker.brokers);
    const { events } = liveFleet({
      sessions: 30,
      events: 2_400,
      seed: 303,
      faultyShare: 0.3,
    });
    const half = Math.floor(events.length / 2);
    const codec = codecFor(c);
    const running = await start(c);
    try {
      await produceEvents(c, events.slice(0, half), codec);
      await sleep(1_000); // mid-stream: some batches committed, others in flight
      const down = Date.now();
      await broker.restart(3_000);
      const downtimeMs = Date.now() - down;
      await produceEvents(c, events.slice(half), codec);
      await waitAllCommitted(c, 240_000);
      const r = await exactlyOnce(c, events, 120_000);
      report('broker restart', {
        events: events.length,
        downtimeMs,
        records: r.records,
        verdicts: r.verdicts,
        spillRequests: r.spills,
        lost: r.lost,
        duplicated: r.duplicated,
        seconds: Math.round((Date.now() - started) / 1000),
      });
      expectExactlyOnce(r);
    } finally {
      await running.stop();
    }
  });
});
