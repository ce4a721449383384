/**
 * The fetch loop's FetchSource (fetchLoop.ts) on @platformatic/kafka's public low-level calls
 * of a Consumer: `metadata()` for the leaders and the topic id, `fetch()` for one raw
 * read_committed Fetch per leader (its response keeps `abortedTransactions` and the control
 * batches, which records.ts filters with), `listOffsets()` for the earliest offsets.
 */
import {
  type Consumer,
  FetchIsolationLevels,
  findErrorBy,
  type fetchV17,
  ListOffsetTimestamps,
} from '@platformatic/kafka';
import type { FetchedPartition, FetchSource, LeaderLayout } from './fetchLoop';

export interface FetchSizes {
  maxBytes: number;
  maxBytesPerPartition: number;
  maxWaitMs: number;
}

/** The partitions of `topicId` in a fetch response. */
function partitionsOf(response: fetchV17.FetchResponse, topicId: string): FetchedPartition[] {
  return response.responses.filter((t) => t.topicId === topicId).flatMap((t) => t.partitions);
}

/**
 * The response a fetch failed with: one partition's error code fails the whole call
 * (ResponseError, which carries the decoded response); the other partitions' data is good.
 */
function responseOfFailure(error: unknown): fetchV17.FetchResponse | null {
  const failure = findErrorBy(error as Error, 'code', 'PLT_KFK_RESPONSE');
  const response = (failure as { response?: unknown } | null)?.response;
  return response !== null && typeof response === 'object' && 'responses' in response
    ? (response as fetchV17.FetchResponse)
    : null;
}

export function consumerFetchSource(consumer: Consumer, topic: string, o: FetchSizes): FetchSource {
  return {
    async layout(fresh): Promise<LeaderLayout> {
      const metadata = await consumer.metadata({ topics: [topic], forceUpdate: fresh });
      const t = metadata.topics.get(topic);
      if (t === undefined) throw new Error(`topic ${topic} is not in the cluster's metadata`);
      // The metadata's partitions are indexed by partition id.
      return { topicId: t.id, leaders: new Map(t.partitions.map((p, i) => [i, p.leader])) };
    },

    async fetch(node, topicId, positions) {
      try {
        const response = await consumer.fetch({
          node,
          isolationLevel: FetchIsolationLevels.READ_COMMITTED,
          minBytes: 1,
          maxBytes: o.maxBytes,
          maxWaitTime: o.maxWaitMs,
          topics: [
            {
              topicId,
              partitions: positions.map((p) => ({
                partition: p.partition,
                fetchOffset: p.offset,
                partitionMaxBytes: o.maxBytesPerPartition,
                currentLeaderEpoch: -1,
                lastFetchedEpoch: -1,
              })),
            },
          ],
        });
        return partitionsOf(response, topicId);
      } catch (e) {
        const response = responseOfFailure(e);
        if (response === null) throw e;
        return partitionsOf(response, topicId);
      }
    },

    async earliest(partitions) {
      const offsets = await consumer.listOffsets({
        topics: [topic],
        partitions: { [topic]: partitions },
        timestamp: ListOffsetTimestamps.EARLIEST,
      });
      const byPartition = offsets.get(topic) ?? [];
      const out = new Map<number, bigint>();
      for (const p of partitions) {
        const offset = byPartition[p];
        if (offset !== undefined) out.set(p, offset);
      }
      return out;
    },
  };
}
