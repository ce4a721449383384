/**
 * The transport's transactional producer on kafkajs: one kafkajs producer per transactional id,
 * its sends one topic-partition per request and checked (partitionPerRequest.ts), its failures
 * typed (src/kafka/transport/errors.ts) by kafkajs' error types (errorTypes.ts).
 */
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { ProducerFencedError, RecordTooLargeError } from '../transport/errors';
import type {
  ProducerTransaction,
  TransactionalProducer,
  TransactionalProducerOptions,
} from '../transport/producer';
import { fencingErrorType, isRecordTooLarge } from './errorTypes';
import { sendPartitionByPartition } from './partitionPerRequest';
import { murmur2Partitioner } from './partitioner';

/** `e` as ProducerFencedError when kafkajs says the producer was fenced; else as it is. */
export function typedFailure(e: unknown): unknown {
  const type = fencingErrorType(e);
  return type !== null && !(e instanceof ProducerFencedError)
    ? new ProducerFencedError(type, e)
    : e;
}

/** `step`, its failure typed. */
function typed<T>(step: () => Promise<T>): Promise<T> {
  return step().catch((e: unknown) => {
    throw typedFailure(e);
  });
}

export function kafkajsTransactionalProducer(
  kafka: Kafka,
  o: TransactionalProducerOptions,
): TransactionalProducer {
  const producer = kafka.producer({
    transactionalId: o.transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: o.transactionTimeoutMs,
    allowAutoTopicCreation: false,
    // Where kafkajs' DefaultPartitioner would place a message, with a murmur2 linear in the key
    // (kafkajs' own is quadratic: partitioner.ts); named, so kafkajs does not warn about its v2
    // change.
    createPartitioner: murmur2Partitioner,
    // kafkajs' default for an idempotent producer is unlimited retries; the client's 200 ms
    // first delay would hold every transaction begun before the previous one's markers are
    // written (CONCURRENT_TRANSACTIONS, KAFKA-5477) for ~200 ms.
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: o.retryMs },
  });
  const { onRequest } = o;
  if (onRequest !== undefined)
    producer.on(producer.events.REQUEST, ({ payload }) =>
      onRequest(payload.apiName, payload.duration),
    );
  return transactionalProducerOf(producer);
}

/** The transport's producer over a kafkajs one (exported for the unit tests' fakes). */
export function transactionalProducerOf(
  producer: Pick<Producer, 'connect' | 'disconnect' | 'transaction'>,
): TransactionalProducer {
  return {
    connect: () => typed(() => producer.connect()),
    disconnect: () => producer.disconnect(),
    transaction: () => typed(() => producer.transaction()).then(transactionOf),
  };
}

function transactionOf(
  txn: Pick<Transaction, 'sendBatch' | 'sendOffsets' | 'commit' | 'abort'>,
): ProducerTransaction {
  return {
    // One topic-partition per sendBatch (sendPartitionByPartition): a kafkajs retry of a request
    // to several leaders can write one leader's messages twice, unseen by the check of its
    // results (tulios/kafkajs#1303).
    send: (request) =>
      typed(() =>
        sendPartitionByPartition(txn, request, (e, sent) =>
          isRecordTooLarge(e) ? new RecordTooLargeError(sent.topic, sent.messages, e) : e,
        ),
      ),
    // kafkajs 2.2.4's TxnOffsetCommit carries the group id only (no generation or member id).
    sendOffsets: (offsets, group) =>
      typed(() =>
        txn.sendOffsets({
          consumerGroupId: group.groupId,
          topics: topicsOf(offsets),
        }),
      ),
    commit: () => typed(() => txn.commit()),
    abort: () => typed(() => txn.abort()),
  };
}

/** Offsets grouped by topic, as kafkajs' sendOffsets takes them. */
function topicsOf(offsets: readonly { topic: string; partition: number; offset: string }[]) {
  const byTopic = new Map<string, { partition: number; offset: string }[]>();
  for (const { topic, partition, offset } of offsets) {
    const partitions = byTopic.get(topic) ?? [];
    partitions.push({ partition, offset });
    byTopic.set(topic, partitions);
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
}
