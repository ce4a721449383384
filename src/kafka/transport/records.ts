/**
 * Records as the processor reads and writes them, in the project's own types: what any Kafka
 * client behind the transport (transport.ts) converts its own to and from. Offsets are decimal
 * strings (Kafka's int64, exact; docs/decisions.md 205).
 */

/** A record's headers: one value, or several under one name. */
export interface RecordHeaders {
  [name: string]: Buffer | string | (Buffer | string)[] | undefined;
}

/** A record to produce; without `partition`, the transport places it by its key. */
export interface OutRecord {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: RecordHeaders;
  /** Milliseconds since the epoch, as a decimal string; the producer's clock when absent. */
  timestamp?: string;
}

/** The records of one produce request for one topic. */
export interface TopicRecords {
  topic: string;
  messages: OutRecord[];
}

/** A fetched record. */
export interface InRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeaders;
  offset: string;
  /** Milliseconds since the epoch, as a decimal string. */
  timestamp: string;
}

/** The records of one fetch of one partition, in offset order. */
export interface FetchedBatch {
  topic: string;
  partition: number;
  /** The partition's high watermark when fetched: the lag after the batch is measured to it. */
  highWatermark: string;
  messages: InRecord[];
  /** The first record's offset; null when the batch has none. */
  firstOffset(): string | null;
  /** The offset of the batch's last record (control records included where the client sees them). */
  lastOffset(): string;
}
