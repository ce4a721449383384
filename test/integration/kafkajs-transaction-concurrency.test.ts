/**
 * Why a batch's transaction sends its produce requests one after another (decision 133): in
 * kafkajs 2.2.4 a transactional producer takes a lock per broker around each send
 * (eosManager.acquireBrokerLock, src/producer/sendMessages.js), so requests started together
 * towards one broker still go out one at a time. This test starts them together on the real
 * broker and records every Produce request kafkajs makes: none overlaps another. If a kafkajs
 * release changes that, this test fails, and concurrency is worth measuring again.
 */
import { randomUUID } from 'node:crypto';
import { kafka } from './pipeline';

jest.setTimeout(60_000);

interface Sent {
  partition: number;
  sentAt: number;
  doneAt: number;
}

describe('kafkajs 2.2.4 transactional sends to one broker', () => {
  it('are serialized: concurrent sendBatch calls give Produce requests that never overlap', async () => {
    const topic = `cg-txn-concurrency-${randomUUID().slice(0, 8)}`;
    const partitions = 4;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions }],
      waitForLeaders: true,
    });
    await admin.disconnect();

    const producer = kafka.producer({
      transactionalId: `cg-txn-concurrency-${randomUUID()}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    const produced: { sentAt: number; duration: number }[] = [];
    producer.on(producer.events.REQUEST, (e) => {
      if (e.payload.apiName === 'Produce')
        produced.push({ sentAt: e.payload.sentAt, duration: e.payload.duration });
    });
    await producer.connect();
    try {
      const spans: Sent[] = [];
      const txn = await producer.transaction();
      // Several rounds, each four partitions at once, so that overlap would have its chance.
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: partitions }, async (_, partition) => {
            const sentAt = Date.now();
            const value = Buffer.alloc(64 * 1024, partition);
            await txn.sendBatch({
              acks: -1,
              topicMessages: [
                {
                  topic,
                  messages: [
                    { partition, value },
                    { partition, value },
                  ],
                },
              ],
            });
            spans.push({ partition, sentAt, doneAt: Date.now() });
          }),
        );
      }
      await txn.commit();

      expect(spans).toHaveLength(5 * partitions);
      // One Produce request per call (one partition each), all to the one broker.
      expect(produced).toHaveLength(5 * partitions);
      const byStart = [...produced].sort((a, b) => a.sentAt - b.sentAt);
      const overlaps = byStart.filter(
        (r, i) => i > 0 && r.sentAt < byStart[i - 1]!.sentAt + byStart[i - 1]!.duration,
      );
      expect(overlaps).toEqual([]);
    } finally {
      await producer.disconnect();
    }
  });
});
