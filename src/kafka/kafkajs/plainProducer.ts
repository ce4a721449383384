/** The transport's plain producer (src/kafka/transport/producer.ts) on kafkajs' Producer. */
import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { Logger } from 'pino';
import type { PlainProducer } from '../transport/producer';
import { checkedSend } from './checkedSend';

/**
 * The one configuration of a producer to the input topic, for everything that writes events
 * (the client, `simulate`; `acknowledge` through the client).
 */
export function kafkajsIdempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({
    // Idempotent with one request in flight: per-partition order holds through retries, and a
    // retried batch is written once (contract §3: seq +1 per event, no gap, no duplicate).
    idempotent: true,
    maxInFlightRequests: 1,
    // The processor creates the topics (or the client, with the processor's settings).
    allowAutoTopicCreation: false,
    // Java's murmur2 on the key, as other Kafka clients: one session, one partition, whoever
    // sends (also what kafkajs uses anyway; named, kafkajs does not warn about its v2 change).
    createPartitioner: Partitioners.DefaultPartitioner,
    // kafkajs' own setting for idempotence: retry until the broker takes the batch (a bounded
    // count could drop it and break a session's sequence); callers bound their own waits.
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 5_000 },
  });
}

/** Sends through `checkedSend`: acknowledged partition by partition (kafkajs#1303). */
export function kafkajsPlainProducer(producer: Producer, log: Pick<Logger, 'warn'>): PlainProducer {
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    send: async (request, partitionCounts) => {
      await checkedSend(producer, request, { partitionCounts, log });
    },
  };
}
