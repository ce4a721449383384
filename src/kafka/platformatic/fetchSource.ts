/**
 * The fetch loop's FetchSource (fetchLoop.ts) on @platformatic/kafka's public low-level calls
 * of a Consumer: `metadata()` for the leaders and the topic id, `fetch()` for one raw
 * read_committed Fetch per leader (its response keeps `abortedTransactions` and the control
 * batches, which records.ts filters with), `listOffsets()` for the earliest offsets. Where the
 * library's own read_committed filter may have dropped committed batches (gap 13), the
 * partition is fetched again read_uncommitted and filtered by records.ts alone.
 */
import {
  type Consumer,
  FetchIsolationLevels,
  findErrorBy,
  type fetchV17,
  ListOffsetTimestamps,
} from '@platformatic/kafka';
import { errorClass } from '../../errors';
import type { FetchedPartition, FetchSource, LeaderLayout } from './fetchLoop';
import { libraryMayHaveDropped, withUnfilteredBatches } from './records';

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

const { READ_COMMITTED, READ_UNCOMMITTED } = FetchIsolationLevels;

/** The read_uncommitted fetch that undoes the client's read_committed filter failed (gap 13). */
export class FetchRereadError extends errorClass('FETCH_REREAD_FAILED', 'FetchRereadError') {
  constructor(topic: string, partition: number, errorCode: number | null) {
    super(
      `${topic}/${partition}: the read_uncommitted fetch that replaces the client's read_committed filter (gap 13) ${errorCode === null ? 'did not return the partition' : `failed with error code ${errorCode}`}; nothing was delivered, the fetch is tried again`,
    );
  }
}

export function consumerFetchSource(consumer: Consumer, topic: string, o: FetchSizes): FetchSource {
  /** One fetch of the partitions at their offsets; a partition's error is in its result. */
  const fetchAt = async (
    node: number,
    topicId: string,
    positions: ReadonlyArray<{ partition: number; offset: bigint }>,
    isolationLevel: number,
  ): Promise<FetchedPartition[]> => {
    try {
      const response = await consumer.fetch({
        node,
        isolationLevel,
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
  };

  return {
    async layout(fresh): Promise<LeaderLayout> {
      const metadata = await consumer.metadata({ topics: [topic], forceUpdate: fresh });
      const t = metadata.topics.get(topic);
      if (t === undefined) throw new Error(`topic ${topic} is not in the cluster's metadata`);
      // The metadata's partitions are indexed by partition id.
      return { topicId: t.id, leaders: new Map(t.partitions.map((p, i) => [i, p.leader])) };
    },

    async fetch(node, topicId, positions) {
      const committed = await fetchAt(node, topicId, positions, READ_COMMITTED);
      const suspect = new Set(
        committed
          .filter((p) => p.errorCode === 0 && libraryMayHaveDropped(p))
          .map((p) => p.partitionIndex),
      );
      if (suspect.size === 0) return committed;
      // gap 13: read those partitions again without the library's filter, and filter them with
      // the read_committed response's aborted list (records.ts). Rare: only a response holding
      // an aborted transaction's marker pays this second fetch.
      const again = positions.filter((p) => suspect.has(p.partition));
      const uncommitted = new Map(
        (await fetchAt(node, topicId, again, READ_UNCOMMITTED)).map((p) => [p.partitionIndex, p]),
      );
      return committed.map((p) => {
        if (!suspect.has(p.partitionIndex)) return p;
        const raw = uncommitted.get(p.partitionIndex);
        if (raw === undefined || raw.errorCode !== 0) {
          throw new FetchRereadError(topic, p.partitionIndex, raw?.errorCode ?? null);
        }
        return withUnfilteredBatches(p, raw.records ?? []);
      });
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
