/**
 * The client library's and the commands' topic consumer on kafkajs
 * (src/kafka/kafkajs/topicConsumer.ts), over a fake of kafkajs' consumer: the options become
 * kafkajs' (read_committed, offsets committed only when asked), records go through
 * `eachMessage` and batches through `eachBatch`, and a fetch and a batch's end are reported.
 */
import type { Consumer, ConsumerConfig, ConsumerRunConfig, Kafka } from 'kafkajs';
import { kafkajsTopicConsumer } from '../../src/kafka/kafkajs/topicConsumer';
import type { InRecord } from '../../src/kafka/transport';

/** A kafkajs client whose one consumer records how it was made, run, sought and told. */
function fakeKafka() {
  const made: ConsumerConfig[] = [];
  const runs: ConsumerRunConfig[] = [];
  const calls: unknown[] = [];
  const listeners = new Map<string, (e: unknown) => void>();
  const consumer = {
    events: { FETCH: 'fetch', END_BATCH_PROCESS: 'end_batch_process' },
    on: (event: string, listener: (e: unknown) => void) => {
      listeners.set(event, listener);
      return () => undefined;
    },
    connect: async () => void calls.push('connect'),
    subscribe: async (s: unknown) => void calls.push({ subscribe: s }),
    run: async (r: ConsumerRunConfig) => void runs.push(r),
    seek: (s: unknown) => void calls.push({ seek: s }),
    disconnect: async () => void calls.push('disconnect'),
  } as unknown as Consumer;
  const kafka = {
    consumer: (c: ConsumerConfig) => {
      made.push(c);
      return consumer;
    },
  } as unknown as Kafka;
  return { kafka, made, runs, calls, listeners };
}

const record = (offset: string): InRecord => ({
  key: Buffer.from('s-1'),
  value: Buffer.from('v'),
  offset,
  timestamp: '0',
});

const options = {
  groupId: 'g',
  topics: ['a', 'b'],
  fromBeginning: true,
  maxWaitMs: 100,
  commitOffsets: true,
};

it('reads committed records one by one, commits when asked, and subscribes every topic before it runs', async () => {
  const { kafka, made, runs, calls } = fakeKafka();
  const seen: [string, number, string][] = [];
  const consumer = kafkajsTopicConsumer(kafka, options);
  await consumer.start({ eachRecord: async (t, p, m) => void seen.push([t, p, m.offset]) });
  expect(made).toEqual([{ groupId: 'g', readUncommitted: false, maxWaitTimeInMs: 100 }]);
  expect(calls).toEqual([
    'connect',
    { subscribe: { topic: 'a', fromBeginning: true } },
    { subscribe: { topic: 'b', fromBeginning: true } },
  ]);
  expect(runs).toHaveLength(1);
  expect(runs[0]!.autoCommit).toBe(true);
  await runs[0]!.eachMessage!({ topic: 'a', partition: 2, message: record('7') } as never);
  expect(seen).toEqual([['a', 2, '7']]);
  await consumer.stop();
  expect(calls.slice(3)).toEqual(['disconnect']);
});

it('hands whole batches over, resolved by kafkajs, commits nothing when not asked, with the session settings given', async () => {
  const { kafka, made, runs } = fakeKafka();
  const batches: unknown[] = [];
  await kafkajsTopicConsumer(kafka, {
    ...options,
    topics: ['v'],
    fromBeginning: false,
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 1_000,
    commitOffsets: false,
  }).start({ eachBatch: async (b) => void batches.push(b) });
  expect(made[0]).toEqual({
    groupId: 'g',
    readUncommitted: false,
    maxWaitTimeInMs: 100,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
  });
  expect(runs[0]).toMatchObject({ autoCommit: false, eachBatchAutoResolve: true });
  expect(runs[0]!.eachMessage).toBeUndefined();
  const batch = { topic: 'v', partition: 0, messages: [record('1')] };
  await runs[0]!.eachBatch!({ batch } as never);
  expect(batches).toEqual([batch]);
});

it("reports each fetch and each batch's end with its last offset (transaction markers included)", async () => {
  const { kafka, listeners } = fakeKafka();
  const told: unknown[] = [];
  await kafkajsTopicConsumer(kafka, options).start({
    eachRecord: async () => undefined,
    fetched: () => told.push('fetched'),
    batchEnd: (topic, partition, lastOffset) => told.push({ topic, partition, lastOffset }),
  });
  listeners.get('fetch')!({});
  listeners.get('end_batch_process')!({ payload: { topic: 'a', partition: 3, lastOffset: '9' } });
  expect(told).toEqual(['fetched', { topic: 'a', partition: 3, lastOffset: '9' }]);
});
