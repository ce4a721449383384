/**
 * The transport's plain producer (src/kafka/transport/producer.ts) on @platformatic/kafka's
 * Producer: the input producer of the client library and `simulate`, configured as the kafkajs
 * one (src/kafka/kafkajs/plainProducer.ts): idempotent, acks = all, no topic created, retried
 * until the broker takes a batch, every record pinned to its partition by Java's murmur2
 * (src/kafka/placement.ts; the library's own partitioner is neither Java's nor linear,
 * design-notes.md gap 15), each partition's acknowledgement checked and what none acknowledged
 * sent again (src/kafka/acknowledgedSend.ts).
 *
 * What differs from kafkajs, by the library: after a send that failed, it takes a
 * new producer id (its idempotent sequences start again), so a batch the broker did write
 * before the failure is written again when sent again: a redelivery, absorbed by eventId
 * (contract §4 steps 0 and 1), as kafkajs' repeated partitions are.
 */
import { Producer, type BaseOptions } from '@platformatic/kafka';
import type { Logger } from 'pino';
import { sendUntilAcknowledged, type Acknowledged, type SendWords } from '../acknowledgedSend';
import type { PlainProducer } from '../transport/producer';
import type { TopicRecords } from '../transport/records';
import { libraryMessages } from './producedMessages';
import { doublingRetryDelay } from './retryDelay';

type LibraryProducer = Producer<Buffer | undefined, Buffer | null, Buffer, Buffer>;

/** kafkajs' input producer's retry: 200 ms, doubling up to 5 s (its `retry` setting). */
const RETRY_INITIAL_MS = 200;
const RETRY_MAX_MS = 5_000;

/** How this client's unacknowledged and repeated partitions are told. */
const PLATFORMATIC_WORDS: SendWords = {
  repeated:
    'a produce request acknowledged these topic-partitions twice (duplicated records; redeliveries are ignored by eventId)',
  resending:
    'a produce request left these topic-partitions without an acknowledgement: sending them again',
  why: 'the answers of @platformatic/kafka did not acknowledge them',
};

/** The one configuration of the library's producer to the input topic. */
export function platformaticIdempotentProducer(base: BaseOptions): LibraryProducer {
  return new Producer({
    ...base,
    // Idempotent: per-partition order holds through retries, and a retried batch is written
    // once (contract §3: seq +1 per event, no gap, no duplicate).
    idempotent: true,
    acks: -1,
    // One request in flight per connection (kafkajs' `maxInFlightRequests: 1`).
    maxInflights: 1,
    // The processor creates the topics (or the client, with the processor's settings).
    autocreateTopics: false,
    // Retried until the broker takes the batch (a bounded count could drop it and break a
    // session's sequence); callers bound their own waits.
    retries: true,
    retryDelay: doublingRetryDelay(RETRY_INITIAL_MS, RETRY_MAX_MS),
  });
}

/** The topic-partitions one send's answers acknowledged. Pure. */
export function acknowledgedBy(result: { offsets?: readonly Acknowledged[] }): Acknowledged[] {
  return (result.offsets ?? []).map(({ topic, partition }) => ({ topic, partition }));
}

export function platformaticPlainProducer(
  producer: LibraryProducer,
  log: Pick<Logger, 'warn'>,
): PlainProducer {
  const sendOnce = async (request: TopicRecords[]) =>
    acknowledgedBy(await producer.send({ messages: libraryMessages(request) }));
  return {
    // The library connects on its first request: this one takes the producer id, as kafkajs'
    // connect and first send do, so that no broker answering fails here.
    connect: async () => {
      await producer.initIdempotentProducer({});
    },
    disconnect: () => producer.close(),
    send: async (request, partitionCounts) => {
      await sendUntilAcknowledged(request, sendOnce, PLATFORMATIC_WORDS, { partitionCounts, log });
    },
  };
}
