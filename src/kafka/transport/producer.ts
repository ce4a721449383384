/**
 * The transactional producer as the processor uses it: one transaction at a time, sending
 * records and the consumer group's offsets, then commit or abort. A transport types its
 * client's failures (errors.ts) where they arise: `transaction()` rejects with
 * ProducerFencedError or anything else (nothing began); `send` with RecordTooLargeError,
 * ProducerFencedError or anything else; `sendOffsets`, `commit` and `abort` with
 * ProducerFencedError or anything else. The unit tests of src/kafka/partition.ts give a fake.
 */
import type { TopicRecords } from './records';

/**
 * The consumer group a transaction's offsets are committed for, as the group coordinator
 * checks them. kafkajs sends the group id only (its producer per input partition fences a
 * zombie); a client that sends the generation and member id too (KIP-447) lets the
 * coordinator refuse a member that lost the partition (docs/decisions.md 206).
 */
export interface GroupMetadata {
  groupId: string;
  /** null: not known from the client (kafkajs does not report it). */
  generationId: number | null;
  /** null: not known from the client. */
  memberId: string | null;
}

/** A partition's position to commit: the offset of the next record to read. */
export interface NextOffset {
  topic: string;
  partition: number;
  offset: string;
}

export interface ProducerTransaction {
  /**
   * One produce request's records, every record pinned to its partition
   * (src/kafka/placement.ts): resolves once every partition it carried is acknowledged once.
   */
  send(request: readonly TopicRecords[]): Promise<void>;
  /** The consumer positions the transaction commits, for `group`. */
  sendOffsets(offsets: readonly NextOffset[], group: GroupMetadata): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

export interface TransactionalProducer {
  /** Connects, and initialises the transactional id: a previous producer of it is fenced. */
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** Begins a transaction. */
  transaction(): Promise<ProducerTransaction>;
}

/** What a transactional producer is made with. */
export interface TransactionalProducerOptions {
  /** Stable per input partition (or per process), so that a new owner fences a zombie. */
  transactionalId: string;
  transactionTimeoutMs: number;
  /** The first pause before a refused transactional request is tried again. */
  retryMs: number;
  /** Each request of the transaction protocol with its duration (trace logs); omitted: none. */
  onRequest?: (api: string, ms: number) => void;
}

/**
 * A producer of acknowledged plain (non-transactional) sends: what the client and `simulate`
 * write input events with.
 */
export interface PlainProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /**
   * Sends with acks = all, every record pinned to its partition by its key
   * (src/kafka/placement.ts, in place) on the topic's partitions in `partitionCounts`, and
   * resolves once every partition is acknowledged: one the client left unsent is sent again,
   * whole, before this resolves (src/kafka/kafkajs/checkedSend.ts), so per-partition order
   * holds for a caller that awaits each send. Rejects with UnacknowledgedSendError
   * (KAFKA_SEND_UNACKNOWLEDGED) when some partition stays unacknowledged.
   */
  send(
    request: readonly TopicRecords[],
    partitionCounts: ReadonlyMap<string, number>,
  ): Promise<void>;
}
