/**
 * The transport's one-off read of a topic (the changelog restore) on @platformatic/kafka: no
 * group, every partition from its earliest offset through the transport's fetch loop
 * (fetchLoop.ts), read_committed; `pause` stops a partition for good.
 */
import { type BaseOptions, Consumer, FetchIsolationLevels } from '@platformatic/kafka';
import type { PartitionReader, PartitionReaderOptions } from '../transport/consumer';
import { FetchLoop } from './fetchLoop';
import { consumerFetchSource } from './fetchSource';

/** How long `stop` waits for the fetches and batches in flight. */
const STOP_GRACE_MS = 5_000;

export function platformaticPartitionReader(
  base: BaseOptions,
  o: PartitionReaderOptions,
): PartitionReader {
  // A Consumer for its fetch and metadata calls; it never joins `groupId`.
  const consumer = new Consumer({
    ...base,
    groupId: o.groupId,
    autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxBytes: o.maxBytes,
    maxWaitTime: o.maxWaitMs,
  });
  const source = consumerFetchSource(consumer, o.topic, o);
  let loop: FetchLoop | null = null;
  return {
    async start(each) {
      loop = new FetchLoop(
        source,
        {
          topic: o.topic,
          partitionsConcurrently: o.partitionsConcurrently,
          // Fetches are retried by the loop, and a batch whose `each` failed is read again
          // (its offset not resolved); the restore's own deadline bounds a reader that keeps
          // failing (restore.ts), as it bounds kafkajs' reader.
          onError: () => undefined,
          onHandlerError: () => undefined,
        },
        async (batch, control) => {
          await each(batch);
          control.resolveOffset(batch.lastOffset());
        },
      );
      const partitions = [...(await source.layout(false)).leaders.keys()];
      const earliest = await source.earliest(partitions);
      loop.add(partitions);
      for (const [p, offset] of earliest) loop.place(p, offset);
      loop.start();
    },
    pause: (partitions) => loop?.pause(partitions),
    async stop() {
      await loop?.stop(STOP_GRACE_MS);
      await consumer.close(true);
    },
  };
}
