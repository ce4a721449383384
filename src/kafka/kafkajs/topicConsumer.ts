/**
 * The transport's topic consumer (src/kafka/transport/topicConsumer.ts) on kafkajs' Consumer:
 * read_committed, in a group (kafkajs has no consumer without one), records through
 * `eachMessage` or batches through `eachBatch`, offsets committed by kafkajs' autoCommit.
 */
import type { Kafka } from 'kafkajs';
import type {
  TopicConsumer,
  TopicConsumerOptions,
  TopicHandlers,
} from '../transport/topicConsumer';

export function kafkajsTopicConsumer(kafka: Kafka, o: TopicConsumerOptions): TopicConsumer {
  const consumer = kafka.consumer({
    groupId: o.groupId,
    readUncommitted: false,
    maxWaitTimeInMs: o.maxWaitMs,
    ...(o.sessionTimeoutMs !== undefined ? { sessionTimeout: o.sessionTimeoutMs } : {}),
    ...(o.heartbeatIntervalMs !== undefined ? { heartbeatInterval: o.heartbeatIntervalMs } : {}),
  });
  return {
    async start(h: TopicHandlers) {
      const { fetched, batchEnd } = h;
      if (fetched) consumer.on(consumer.events.FETCH, () => fetched());
      if (batchEnd)
        consumer.on(consumer.events.END_BATCH_PROCESS, (e) =>
          batchEnd(e.payload.topic, e.payload.partition, e.payload.lastOffset),
        );
      await consumer.connect();
      for (const topic of o.topics)
        await consumer.subscribe({ topic, fromBeginning: o.fromBeginning });
      if ('eachRecord' in h)
        await consumer.run({
          autoCommit: o.commitOffsets,
          eachMessage: ({ topic, partition, message }) => h.eachRecord(topic, partition, message),
        });
      else
        await consumer.run({
          autoCommit: o.commitOffsets,
          eachBatchAutoResolve: true,
          eachBatch: ({ batch }) => h.eachBatch(batch),
        });
      // kafkajs takes seeks only once running; `run` returns before its first fetch, and a
      // seek is applied at that fetch.
      for (const s of o.startAt ?? []) consumer.seek(s);
    },
    stop: () => consumer.disconnect(),
  };
}
