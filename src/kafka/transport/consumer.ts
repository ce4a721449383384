/**
 * The consumer group over the input topic, and the one-off read of the changelog, as the
 * processor uses them: read_committed, no autocommit (offsets commit in the transactions).
 */
import type { FetchedBatch } from './records';
import type { GroupMetadata } from './producer';

export interface GroupConsumerOptions {
  groupId: string;
  topic: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  rebalanceTimeoutMs: number;
  maxBytesPerPartition: number;
  maxBytes: number;
  maxWaitMs: number;
  /** How many partitions' batches may be handled at once. */
  partitionsConcurrently: number;
}

/** What a batch's handler may do while it holds the batch. */
export interface BatchControl {
  /** Tells the group this member is alive; rejects when a rebalance took the partition. */
  heartbeat(): Promise<void>;
  /** The batch is processed up to and including `offset`: the consumer's position moves past it. */
  resolveOffset(offset: string): void;
  /** The consumer is still running (not stopping). */
  isRunning(): boolean;
  /** A rebalance or seek made the batch out of date: what is left of it is not to be processed. */
  isStale(): boolean;
}

/** What the group tells its user; called in this order on a rebalance: revoked, then assigned. */
export interface GroupHandlers {
  /** Partitions no longer assigned to this member. */
  revoked(partitions: number[]): void;
  /** The whole assignment after a join (partitions kept and new ones), and the group's metadata. */
  assigned(partitions: number[], group: GroupMetadata): void;
  /** One fetched batch of an assigned partition; the next of that partition waits for it. */
  batch(batch: FetchedBatch, control: BatchControl): Promise<void>;
  /** The consumer failed; `restart`: it starts again by itself, from the committed offsets. */
  crashed(error: unknown, restart: boolean): void;
}

export interface GroupConsumer {
  /** Joins the group and starts fetching (resolves once running). */
  start(handlers: GroupHandlers): Promise<void>;
  /** The next batch of `partition` starts at `offset`. */
  seek(partition: number, offset: string): void;
  pause(partitions: number[]): void;
  resume(partitions: number[]): void;
  /** Leaves the group. */
  stop(): Promise<void>;
}

/** A one-off read of a topic's partitions from their beginning (the changelog restore). */
export interface PartitionReaderOptions {
  /** A group of its own (the kafkajs consumer needs one; a client with fetch may not). */
  groupId: string;
  topic: string;
  maxBytesPerPartition: number;
  maxBytes: number;
  maxWaitMs: number;
  partitionsConcurrently: number;
}

export interface PartitionReader {
  /**
   * Reads every partition of the topic from its beginning, each batch to `each` (partitions
   * concurrently, each in order), until `pause` stops a partition; resolves once reading.
   */
  start(each: (batch: FetchedBatch) => Promise<void>): Promise<void>;
  /** No more batches of `partitions`. */
  pause(partitions: number[]): void;
  stop(): Promise<void>;
}
