/**
 * How large a record each topic the processor writes accepts: the topic's `max.message.bytes`
 * (read at start-up, src/kafka/topics.ts), lowered when a broker refuses a record as too large
 * all the same (MESSAGE_TOO_LARGE: a broker-level limit, or a topic changed since). A record
 * that would not fit is never sent: its input record is dead-lettered instead (its dead letter
 * truncated if need be), so nothing the processor writes can be refused for its size and hold
 * the partition (docs/decisions.md 120).
 */
import type { OutRecord } from './transport';
import { estimatedBytes } from './outputChunks';

/** Kafka's default `max.message.bytes` (1 MiB plus the record batch overhead). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/**
 * Room kept beyond `estimatedBytes` for what it leaves out: the record batch header (61 B) and
 * the varint lengths of large keys, values and headers.
 */
export const RECORD_MARGIN = 512;

/** Whether `m` fits a topic whose records may have up to `limit` bytes. */
export function fits(m: OutRecord, limit: number): boolean {
  return estimatedBytes(m) + RECORD_MARGIN <= limit;
}

export class RecordLimits {
  private readonly learned = new Map<string, number>();

  constructor(
    /** `max.message.bytes` by topic, as read at start-up (topics not in it: Kafka's default). */
    private readonly configured: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** The largest record `topic` takes, as far as is known. */
  of(topic: string): number {
    const c = this.configured.get(topic) ?? DEFAULT_MAX_MESSAGE_BYTES;
    const l = this.learned.get(topic);
    return l === undefined ? c : Math.min(c, l);
  }

  /** The broker refused `bytes` for `topic`: anything that large is too large. True if news. */
  refused(topic: string, bytes: number): boolean {
    const below = bytes + RECORD_MARGIN - 1;
    if (below >= this.of(topic)) return false;
    this.learned.set(topic, below);
    return true;
  }
}
