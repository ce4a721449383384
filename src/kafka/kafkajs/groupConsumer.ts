/**
 * The transport's consumer group and changelog reader on kafkajs' Consumer: read_committed, no
 * autocommit, `eachBatch` with kafkajs' own batch (structurally the transport's FetchedBatch).
 */
import type { Consumer, Kafka } from 'kafkajs';
import type {
  GroupConsumer,
  GroupConsumerOptions,
  GroupHandlers,
  PartitionReader,
  PartitionReaderOptions,
} from '../transport/consumer';

export function kafkajsGroupConsumer(kafka: Kafka, o: GroupConsumerOptions): GroupConsumer {
  const consumer = kafka.consumer({
    groupId: o.groupId,
    readUncommitted: false,
    sessionTimeout: o.sessionTimeoutMs,
    heartbeatInterval: o.heartbeatIntervalMs,
    rebalanceTimeout: o.rebalanceTimeoutMs,
    maxBytesPerPartition: o.maxBytesPerPartition,
    maxBytes: o.maxBytes,
    maxWaitTimeInMs: o.maxWaitMs,
    allowAutoTopicCreation: false,
  });
  const { topic } = o;
  return {
    async start(h: GroupHandlers) {
      // kafkajs (eager protocol) reports each join's whole assignment; what left it is revoked.
      let assigned = new Set<number>();
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        const now = e.payload.memberAssignment[topic] ?? [];
        const kept = new Set(now);
        h.revoked([...assigned].filter((p) => !kept.has(p)));
        assigned = kept;
        h.assigned(now, {
          groupId: e.payload.groupId,
          generationId: null,
          memberId: e.payload.memberId,
        });
      });
      consumer.on(consumer.events.CRASH, (e) => h.crashed(e.payload.error, e.payload.restart));
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: o.partitionsConcurrently,
        eachBatch: ({ batch, heartbeat, resolveOffset, isRunning, isStale }) =>
          h.batch(batch, { heartbeat, resolveOffset, isRunning, isStale }),
      });
    },
    seek: (partition, offset) => consumer.seek({ topic, partition, offset }),
    pause: (partitions) => pauseOf(consumer, topic, partitions),
    resume: (partitions) => consumer.resume([{ topic, partitions }]),
    stop: () => consumer.disconnect(),
  };
}

function pauseOf(consumer: Consumer, topic: string, partitions: number[]): void {
  consumer.pause([{ topic, partitions }]);
}

/**
 * kafkajs has no manual partition assignment, so the reader is a consumer in a group of its
 * own (a fresh id, nothing committed).
 */
export function kafkajsPartitionReader(kafka: Kafka, o: PartitionReaderOptions): PartitionReader {
  const consumer = kafka.consumer({
    groupId: o.groupId,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: o.maxBytesPerPartition,
    maxBytes: o.maxBytes,
    maxWaitTimeInMs: o.maxWaitMs,
  });
  const { topic } = o;
  return {
    async start(each) {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: o.partitionsConcurrently,
        eachBatch: ({ batch }) => each(batch),
      });
    },
    pause: (partitions) => pauseOf(consumer, topic, partitions),
    stop: () => consumer.disconnect(),
  };
}
