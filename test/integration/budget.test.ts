/**
 * Issue 28, items 5 and 6, on the real broker:
 * - bounded work per transaction (docs/decisions.md 162): a burst of short requests into one
 *   partition, the record shape of the worst amplification (bench/amplification.ts), is
 *   processed in transactions that each commit within the consumer session timeout, with no
 *   resync and no rebalance after the first assignment, every request answered exactly once;
 * - memory freed by processing time (docs/decisions.md 161): sessions whose events are stamped
 *   a year ago or near 2^52 are not swept as they are processed, and decide as `audit` does;
 * - a SIGKILL run over a replay of events stamped a year ago agrees with `audit`.
 */
import pino from 'pino';
import { startProcessor } from '../../src/cli/run';
import type { ContextEvent } from '../../src/engine/events';
import { sessionOfKey } from '../../src/kafka/changelogKeys';
import type { ProcessorObserver } from '../../src/kafka/processorObserver';
import { Rng, generateFleetArray } from '../../src/sim';
import { fragmented, shortRequest } from '../../bench/amplificationShapes';
import { SessionBuilder } from '../support/sessionBuilder';
import {
  drain,
  exactlyOnce,
  exactlyOnceFigures,
  expectExactlyOnce,
  faultLogFile,
  httpStatus,
  killHard,
  report,
  sleep,
  spawnProcessor,
  waitAllCommitted,
  waitFor,
  type Child,
} from './faults/harness';
import { codecFor, kafka, produceEvents, testConfig } from './pipeline';

jest.setTimeout(420_000);

const YEAR_MS = 365 * 86_400_000;

/** What the processor's observer saw: transaction times, resyncs, assignments. */
function watching() {
  const seen = { transactionSeconds: [] as number[], resyncs: 0, rebalances: 0, aborted: 0 };
  const observer: ProcessorObserver = {
    transaction: (outcome, _records, seconds) => {
      if (outcome === 'aborted') seen.aborted++;
      else if (seconds !== undefined) seen.transactionSeconds.push(seconds);
    },
    resync: () => seen.resyncs++,
    rebalance: () => seen.rebalances++,
  };
  return { seen, observer };
}

describe('bounded work per transaction (CG_TRANSACTION_BUDGET_MS / _BYTES)', () => {
  it('a 5 MB burst of short refused requests into one partition commits every transaction within the session timeout, with no resync or rebalance, each request answered exactly once', async () => {
    const c = testConfig({ partitions: 1, maxBytesPerPartition: 8 * 1024 * 1024 });
    const now = Date.now();
    const session = fragmented(400, 'burst', now - 60_000);
    const requests = Array.from({ length: 24_000 }, (_, i) =>
      shortRequest('burst', i, session.seq + i, now + i),
    );
    const events: ContextEvent[] = [...session.events, ...requests];
    const requestBytes = requests.reduce((n, e) => n + JSON.stringify(e).length, 0);
    expect(requestBytes).toBeGreaterThan(5_000_000);
    const admin = kafka.admin();
    await admin.connect();
    const { seen, observer } = watching();
    try {
      await admin.createTopics({ topics: [{ topic: c.inputTopic, numPartitions: 1 }] });
      // All of it in the topic before the processor starts: its first fetch is one 8 MiB batch.
      await produceEvents(c, events);
      const running = await startProcessor(c, pino({ level: 'silent' }), { observer });
      try {
        await waitAllCommitted(c, 300_000);
        const r = await exactlyOnce(c, events, 180_000);
        const longest = Math.max(...seen.transactionSeconds);
        report('burst', {
          requests: requests.length,
          requestBytes,
          transactions: seen.transactionSeconds.length,
          longestTransactionSeconds: longest,
          resyncs: seen.resyncs,
          rebalances: seen.rebalances,
          ...exactlyOnceFigures(r),
        });
        expectExactlyOnce(r);
        expect(r.verdicts).toBe(requests.length);
        // Split: more than one transaction for the one fetched batch, each within the timeout.
        expect(seen.transactionSeconds.length).toBeGreaterThan(1);
        expect(longest).toBeLessThan(c.sessionTimeoutMs / 1000);
        expect({
          resyncs: seen.resyncs,
          rebalances: seen.rebalances,
          aborted: seen.aborted,
        }).toEqual({ resyncs: 0, rebalances: 1, aborted: 0 });
        expect(await httpStatus(running.httpPort, '/healthz')).toBe(200);
      } finally {
        await running.stop();
      }
    } finally {
      await admin.disconnect();
    }
  });
});

describe('memory freed by processing time (contract §4 "Freeing memory")', () => {
  it('sessions stamped a year ago and near 2^52 are held through sweeps at a small CG_MAX_SESSIONS, and their later requests decide as `audit` decides', async () => {
    const c = testConfig({ partitions: 1, maxSessions: 3 });
    const now = Date.now();
    const old = new SessionBuilder('year-ago', now - YEAR_MS).open().turns(20);
    const far = new SessionBuilder('far-future', 2 ** 52 - 1 - 100_000).open().turns(2);
    const first: ContextEvent[] = [...old.events, ...far.events];
    // Another session's event later, so that a sweep runs while the two are untouched.
    const other = new SessionBuilder('now', now).open().events;
    const oldRequest = old.request('late', 'TURNS', 0, 0, 0).events.slice(-1);
    const { seen, observer } = watching();
    const running = await startProcessor(c, pino({ level: 'silent' }), { observer });
    try {
      await produceEvents(c, first);
      await waitAllCommitted(c, 120_000);
      await sleep(11_000); // the sweep runs at most every 10 s
      await produceEvents(c, other);
      await waitAllCommitted(c, 60_000);
      await produceEvents(c, oldRequest);
      await waitAllCommitted(c, 60_000);
      expect(running.processor.sessionCount()).toBe(3);
      const events = [...first, ...other, ...oldRequest];
      const r = await exactlyOnce(c, events, 60_000);
      expectExactlyOnce(r);
      const verdicts = r.decoded.filter((x) => x.record === 'verdict');
      expect(verdicts.map((v) => [v.sessionId, v.decision])).toEqual([['year-ago', 'APPROVE']]);
      // No tombstone: nothing was freed.
      const changelog = await drain([c.changelogTopic], 3, 2_000, 60_000);
      const tombstones = changelog.filter(
        (x) => x.value === null && sessionOfKey(x.key ?? '') !== null,
      );
      expect(tombstones).toEqual([]);
      expect(seen.resyncs).toBe(0);
    } finally {
      await running.stop();
    }
  });

  it("a session's processing-time stamp is in its changelog record's headers and survives a restart (the restore does not restamp it)", async () => {
    const c = testConfig({ partitions: 1 });
    const events = new SessionBuilder('stamped', Date.now() - YEAR_MS)
      .open()
      .turns(3)
      .close().events;
    const stampIn = async (running: Awaited<ReturnType<typeof startProcessor>>) => {
      await waitFor(
        'the partition to be restored',
        async () => running.processor.isReady(),
        60_000,
      );
      return running.processor.partitions().get(0)!.sessions.stampOf('stamped');
    };
    const first = await startProcessor(c, pino({ level: 'silent' }));
    let before;
    try {
      await produceEvents(c, events);
      await waitAllCommitted(c, 60_000);
      before = await stampIn(first);
    } finally {
      await first.stop();
    }
    expect(before).toEqual({ seenAt: expect.any(Number), closedSince: expect.any(Number) });
    expect(Date.now() - before!.seenAt).toBeLessThan(120_000); // processing time, not a year ago
    const records = await drain([c.changelogTopic], 1, 2_000, 60_000);
    const record = records.filter((x) => x.key === 'stamped').at(-1)!;
    expect(record.headers).toEqual({
      'cg.seen-at': String(before!.seenAt),
      'cg.closed-since': String(before!.closedSince),
    });
    await sleep(1_000); // a restore stamping with its own time would differ
    const second = await startProcessor(c, pino({ level: 'silent' }));
    try {
      expect(await stampIn(second)).toEqual(before);
    } finally {
      await second.stop();
    }
  });

  it('SIGKILL/restart cycles over a replay of events stamped a year ago: exactly once, every verdict as `audit` decides', async () => {
    const CYCLES = 4;
    const c = testConfig({ partitions: 3, sessionTimeoutMs: 6_000, transactionTimeoutMs: 5_000 });
    const { events } = generateFleetArray({
      startTime: Date.now() - YEAR_MS,
      sessions: 30,
      events: 3_000,
      seed: 101,
      faultyShare: 0.3,
    });
    const size = Math.ceil(events.length / CYCLES);
    const parts = Array.from({ length: CYCLES }, (_, i) => events.slice(i * size, (i + 1) * size));
    const codec = codecFor(c);
    const rng = new Rng(28);
    const log = faultLogFile('replay-kill');
    let child: Child | null = null;
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        child = await spawnProcessor(c, log);
        const ready = async () => (await httpStatus(child!.httpPort, '/readyz')) === 200;
        await waitFor('the instance to be ready', ready, 120_000);
        await produceEvents(c, parts[cycle]!, codec);
        // Past at least one sweep (every 10 s) while the part is processed.
        await sleep(10_500 + rng.next() * 2_000);
        await killHard(child);
      }
      child = await spawnProcessor(c, log);
      await waitAllCommitted(c, 180_000);
      const r = await exactlyOnce(c, events, 90_000);
      report('replay a year old under kills', { cycles: CYCLES, ...exactlyOnceFigures(r), log });
      expectExactlyOnce(r);
    } finally {
      if (child) {
        child.proc.kill('SIGTERM');
        await Promise.race([child.exited, sleep(15_000)]);
        await killHard(child);
      }
    }
  });
});
