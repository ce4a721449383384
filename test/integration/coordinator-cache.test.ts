/**
 * The coordinator cache against the real broker: a transactional producer opted in sends
 * FindCoordinator once per coordinator instead of 4 times per transaction, and its
 * transactions (records + consumer offsets) still commit: a read_committed reader sees every
 * record once, and the group's offset is the last one sent.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { cacheTransactionCoordinators } from '../../src/kafka/kafkajs/coordinatorCache';
import { serviceEnv } from './env';

jest.setTimeout(120_000);

const TRANSACTIONS = 6;

async function runTransactions(
  kafka: Kafka,
  topic: string,
  groupId: string,
): Promise<{ findCoordinator: number; byApi: Map<string, number> }> {
  const producer: Producer = kafka.producer({
    transactionalId: `${topic}-${groupId}`,
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 20, initialRetryTime: 10 },
  });
  const byApi = new Map<string, number>();
  producer.on(producer.events.REQUEST, ({ payload }) => {
    byApi.set(payload.apiName, (byApi.get(payload.apiName) ?? 0) + 1);
  });
  await producer.connect();
  try {
    for (let i = 0; i < TRANSACTIONS; i++) {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ key: groupId, value: `${groupId}-${i}` }] });
      await txn.sendOffsets({
        consumerGroupId: groupId,
        topics: [{ topic, partitions: [{ partition: 0, offset: String(i + 1) }] }],
      });
      await txn.commit();
    }
  } finally {
    await producer.disconnect();
  }
  // kafkajs names FindCoordinator (API key 10) by its old name, GroupCoordinator.
  return { findCoordinator: byApi.get('GroupCoordinator') ?? 0, byApi };
}

async function committedValues(kafka: Kafka, topic: string, expected: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, readUncommitted: false });
  const values: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`saw ${values.length}/${expected}`)), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value!.toString());
          if (values.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return values;
}

describe('transaction coordinator cache (real broker)', () => {
  const { brokers } = serviceEnv();
  const client = (id: string) =>
    new Kafka({ clientId: id, brokers, logLevel: logLevel.NOTHING, retry: { retries: 8 } });

  it('sends FindCoordinator twice in all instead of 4× per transaction, and the transactions still commit', async () => {
    const topic = `coordinator-cache-${randomUUID()}`;
    const admin = client('cc-admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

    const plain = await runTransactions(client('cc-plain'), topic, 'plain');
    const cachedClient = client('cc-cached');
    cacheTransactionCoordinators(cachedClient);
    const cached = await runTransactions(cachedClient, topic, 'cached');

    // kafkajs alone: before AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn
    // of every transaction, plus once for InitProducerId at connect.
    expect(plain.findCoordinator).toBeGreaterThanOrEqual(4 * TRANSACTIONS);
    // Cached: the transaction coordinator (InitProducerId) and the group coordinator, once each.
    expect(cached.findCoordinator).toBe(2);
    // Every transaction's requests went out through the cached coordinators. (Totals are not
    // compared: a transaction begun right after the previous commit may be retried on
    // CONCURRENT_TRANSACTIONS, more often when the cache makes the next one start sooner.)
    for (const api of ['AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn'])
      expect(cached.byApi.get(api) ?? 0).toBeGreaterThanOrEqual(TRANSACTIONS);

    const values = await committedValues(client('cc-reader'), topic, 2 * TRANSACTIONS);
    expect(values.filter((v) => v.startsWith('cached-')).sort()).toEqual(
      Array.from({ length: TRANSACTIONS }, (_, i) => `cached-${i}`).sort(),
    );
    const offsets = await admin.fetchOffsets({ groupId: 'cached', topics: [topic] });
    expect(offsets[0]!.partitions[0]!.offset).toBe(String(TRANSACTIONS));
    await admin.disconnect();
  });
});
