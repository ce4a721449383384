/**
 * A read_committed consumer of whole topics in a group, for what reads beside the processor:
 * the client's verdict consumer, the spill worker, the on-call commands' readers.
 */
import type { FetchedBatch, InRecord } from './records';

export interface TopicConsumerOptions {
  groupId: string;
  topics: string[];
  /** Where a partition with no committed offset starts: its earliest record, else its end. */
  fromBeginning: boolean;
  maxWaitMs: number;
  /** Omitted: the client's defaults. */
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /**
   * true: the group's offsets are committed past each record once its handler resolved (a
   * handler that rejects leaves its record to be read again); false: nothing is committed.
   */
  commitOffsets: boolean;
  /**
   * Where these partitions are first read from, whatever the group committed (a reader's own
   * start). Applied before the first fetch of each: a seek after `start` could come after a
   * first batch was handed over, and that batch would then be read twice.
   */
  startAt?: readonly { topic: string; partition: number; offset: string }[];
}

/** What the consumer tells its user: records one by one, or whole batches. */
export type TopicHandlers = (
  | {
      /** One record; the next of its partition waits for it. */
      eachRecord(topic: string, partition: number, record: InRecord): Promise<void>;
    }
  | {
      /** One batch of a partition; its records count as read once it resolves. */
      eachBatch(batch: FetchedBatch): Promise<void>;
    }
) & {
  /** A fetch returned (with records or none). */
  fetched?(): void;
  /** A batch was handled up to `lastOffset` (transaction markers included, never delivered). */
  batchEnd?(topic: string, partition: number, lastOffset: string): void;
};

export interface TopicConsumer {
  /** Joins the group and starts reading (resolves once running). */
  start(handlers: TopicHandlers): Promise<void>;
  /** Leaves the group. */
  stop(): Promise<void>;
}
