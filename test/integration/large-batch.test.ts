/**
 * A fetched batch whose outputs together exceed the broker's message.max.bytes (1 MiB by
 * default) must still commit: kafkajs puts all of one request's messages for a partition into
 * a single record batch, so the processor splits its outputs across requests of the same
 * transaction (src/kafka/outputChunks.ts). Without that, such a batch fails with
 * MESSAGE_TOO_LARGE on every retry and its partition never moves again.
 */
import type { ContextEvent } from '../../src/engine/events';
import { TYPICAL_POLICY } from '../../bench/typical';
import { httpStatus, waitAllCommitted } from './faults/harness';
import { kafka, produceEvents, start, testConfig } from './pipeline';

const SESSIONS = 16_000;

function sessionOpened(i: number): ContextEvent {
  const sessionId = `large-batch-session-${String(i).padStart(6, '0')}`;
  return {
    type: 'SessionOpened',
    sessionId,
    seq: 0,
    eventId: `${sessionId}-0`,
    occurredAt: 1_790_000_000_000 + i,
    policy: TYPICAL_POLICY,
  };
}

describe('outputs larger than message.max.bytes', () => {
  it('a fetched batch of 16k new sessions (changelog > 1 MiB in one transaction) commits', async () => {
    // 8 MiB fetches, so the first fetch holds all ~4.8 MB of input in one batch.
    const c = testConfig({
      partitions: 1,
      maxBytesPerPartition: 8 * 1024 * 1024,
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: c.inputTopic, numPartitions: 1 }] });
      const events = Array.from({ length: SESSIONS }, (_, i) => sessionOpened(i));
      await produceEvents(c, events);
      const inputBytes = events.reduce((n, e) => n + JSON.stringify(e).length, 0);
      expect(inputBytes).toBeGreaterThan(4 * 1024 * 1024);
      const running = await start(c);
      try {
        await waitAllCommitted(c, 90_000);
        const [changelog] = await admin.fetchTopicOffsets(c.changelogTopic);
        // One state per session, plus the transactions' commit markers.
        expect(Number(changelog!.high)).toBeGreaterThanOrEqual(SESSIONS);
        expect(await httpStatus(running.httpPort, '/healthz')).toBe(200);
      } finally {
        await running.stop();
      }
    } finally {
      await admin.disconnect();
    }
  }, 150_000);
});
