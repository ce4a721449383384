/**
 * The transport's producer and consumer group on kafkajs (src/kafka/kafkajs/), over fakes of
 * kafkajs' producer and consumer: kafkajs' failures come out typed (fencing by its protocol
 * error types, a too-large request with its topic and records), a transaction's offsets go to
 * kafkajs' sendOffsets with the group id, each send goes one topic-partition per request and is
 * checked, and a join's assignment is reported as revoked-then-assigned.
 */
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import type { Consumer, Kafka, Transaction } from 'kafkajs';
import { kafkajsGroupConsumer } from '../../src/kafka/kafkajs/groupConsumer';
import { transactionalProducerOf } from '../../src/kafka/kafkajs/transactionalProducer';
import {
  ProducerFencedError,
  RecordTooLargeError,
  type GroupHandlers,
  type GroupMetadata,
} from '../../src/kafka/transport';

/** A protocol error as kafkajs builds it from a broker's error code. */
const protocolError = (type: string, code: number) =>
  new KafkaJSProtocolError({
    type,
    code,
    retriable: false,
    message: `${type} from the broker`,
  } as never);

const GROUP: GroupMetadata = { groupId: 'cg', generationId: null, memberId: null };

type Sent = { topicName: string; partition: number; errorCode: number }[];

/** A kafkajs producer whose transactions record their calls and fail where told. */
function fakeProducer(
  fail: Partial<Record<'begin' | 'sendBatch' | 'sendOffsets' | 'commit', unknown>> = {},
) {
  const calls: unknown[] = [];
  const step = async (name: keyof typeof fail) => {
    if (fail[name] !== undefined) throw fail[name];
  };
  const txn: Pick<Transaction, 'sendBatch' | 'sendOffsets' | 'commit' | 'abort'> = {
    sendBatch: async ({ topicMessages }) => {
      calls.push({ sendBatch: topicMessages });
      await step('sendBatch');
      const sent: Sent = (topicMessages ?? []).flatMap(({ topic, messages }) => [
        { topicName: topic, partition: messages[0]!.partition!, errorCode: 0 },
      ]);
      return sent as never;
    },
    sendOffsets: async (o) => {
      calls.push({ sendOffsets: o });
      await step('sendOffsets');
    },
    commit: async () => {
      calls.push('commit');
      await step('commit');
    },
    abort: async () => void calls.push('abort'),
  };
  const producer = transactionalProducerOf({
    connect: async () => undefined,
    disconnect: async () => undefined,
    transaction: async () => {
      await step('begin');
      return txn as Transaction;
    },
  });
  return { producer, calls };
}

describe('the kafkajs transactional producer', () => {
  it('sends each topic-partition of a request as its own sendBatch, then the offsets with the group id, then commits', async () => {
    const { producer, calls } = fakeProducer();
    const txn = await producer.transaction();
    await txn.send([
      {
        topic: 'verdicts',
        messages: [
          { key: 'a', value: '1', partition: 0 },
          { key: 'b', value: '2', partition: 1 },
        ],
      },
    ]);
    await txn.sendOffsets([{ topic: 'ctx', partition: 3, offset: '42' }], GROUP);
    await txn.commit();
    expect(calls).toEqual([
      { sendBatch: [{ topic: 'verdicts', messages: [{ key: 'a', value: '1', partition: 0 }] }] },
      { sendBatch: [{ topic: 'verdicts', messages: [{ key: 'b', value: '2', partition: 1 }] }] },
      {
        sendOffsets: {
          consumerGroupId: 'cg',
          topics: [{ topic: 'ctx', partitions: [{ partition: 3, offset: '42' }] }],
        },
      },
      'commit',
    ]);
  });

  it.each(['begin', 'sendBatch', 'sendOffsets', 'commit'] as const)(
    'types a fencing protocol error at %s, bare or wrapped in exhausted retries, as ProducerFencedError',
    async (step) => {
      const bare = protocolError('PRODUCER_FENCED', 90);
      const wrapped = new KafkaJSNumberOfRetriesExceeded(bare, {
        retryCount: 5,
        retryTime: 1000,
      } as never);
      for (const error of [bare, wrapped]) {
        const { producer } = fakeProducer({ [step]: error });
        const run = async () => {
          const txn = await producer.transaction();
          await txn.send([{ topic: 'v', messages: [{ value: 'x', partition: 0 }] }]);
          await txn.sendOffsets([{ topic: 'ctx', partition: 0, offset: '1' }], GROUP);
          await txn.commit();
        };
        const e = await run().catch((x: unknown) => x);
        expect(e).toBeInstanceOf(ProducerFencedError);
        expect(e).toMatchObject({ type: 'PRODUCER_FENCED', cause: error });
      }
    },
  );

  it('types a request refused as too large as RecordTooLargeError with its topic and records', async () => {
    const tooLarge = protocolError('MESSAGE_TOO_LARGE', 10);
    const { producer } = fakeProducer({ sendBatch: tooLarge });
    const txn = await producer.transaction();
    const messages = [{ value: 'x', partition: 2 }];
    const e = await txn.send([{ topic: 'dlq', messages }]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RecordTooLargeError);
    expect(e).toMatchObject({ topic: 'dlq', messages, cause: tooLarge });
  });

  it('passes any other failure through as it is', async () => {
    const other = new Error('connection closed');
    const { producer } = fakeProducer({ commit: other });
    const txn = await producer.transaction();
    await expect(txn.commit()).rejects.toBe(other);
  });
});

describe('the kafkajs consumer group', () => {
  /** A kafkajs consumer whose GROUP_JOIN handler the test calls. */
  function fakeKafka() {
    const on = new Map<string, (e: unknown) => void>();
    const consumer = {
      events: { GROUP_JOIN: 'join', CRASH: 'crash' },
      on: (event: string, f: (e: unknown) => void) => void on.set(event, f),
      connect: async () => undefined,
      subscribe: async () => undefined,
      run: async () => undefined,
    } as unknown as Consumer;
    const kafka = { consumer: () => consumer } as unknown as Kafka;
    const join = (assignment: number[]) =>
      on.get('join')!({
        payload: { groupId: 'cg', memberId: 'm-1', memberAssignment: { ctx: assignment } },
      });
    return { kafka, join };
  }

  it('reports each join as the partitions it no longer has, then the whole assignment', async () => {
    const { kafka, join } = fakeKafka();
    const seen: unknown[] = [];
    const handlers: GroupHandlers = {
      revoked: (p) => void seen.push({ revoked: p }),
      assigned: (p, g) => void seen.push({ assigned: p, group: g }),
      batch: async () => undefined,
      crashed: () => undefined,
    };
    const group = kafkajsGroupConsumer(kafka, {
      groupId: 'cg',
      topic: 'ctx',
      sessionTimeoutMs: 30_000,
      heartbeatIntervalMs: 3_000,
      rebalanceTimeoutMs: 30_000,
      maxBytesPerPartition: 1,
      maxBytes: 1,
      maxWaitMs: 1,
      partitionsConcurrently: 1,
    });
    await group.start(handlers);
    join([0, 1]);
    join([1, 2]);
    const g = { groupId: 'cg', generationId: null, memberId: 'm-1' };
    expect(seen).toEqual([
      { revoked: [] },
      { assigned: [0, 1], group: g },
      { revoked: [0] },
      { assigned: [1, 2], group: g },
    ]);
  });
});
