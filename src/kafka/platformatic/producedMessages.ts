/**
 * The transport's records (src/kafka/transport/records.ts) as @platformatic/kafka 2.12.1
 * produces them: keys, values and header names and values as Buffers, timestamps as bigint
 * milliseconds, every record on the partition it was pinned to (src/kafka/placement.ts). Pure.
 */
import type { MessageToProduce } from '@platformatic/kafka';
import type { OutRecord, RecordHeaders, TopicRecords } from '../transport/records';

/** A record as the library's producer takes it (tombstones have a null value). */
export type LibraryMessage = MessageToProduce<Buffer | undefined, Buffer | null, Buffer, Buffer>;

const bytesOf = (x: Buffer | string): Buffer => (Buffer.isBuffer(x) ? x : Buffer.from(x, 'utf8'));

/**
 * Headers as a Map of Buffers, each value of a repeated name its own entry (the Map is keyed
 * by Buffer identity, so equal names stay apart). A plain object of strings would be written
 * with `string.length` as the byte length (the library's no-op serialiser), wrong for any
 * name or value that is not ASCII (design-notes.md §4).
 */
export function headersOf(headers: RecordHeaders | undefined): Map<Buffer, Buffer> | undefined {
  if (headers === undefined) return undefined;
  const out = new Map<Buffer, Buffer>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.set(bytesOf(name), bytesOf(v));
  }
  return out;
}

/** One record for `topic`; a record without a partition is a bug of its caller. */
export function libraryMessage(topic: string, m: OutRecord): LibraryMessage {
  if (m.partition === undefined)
    throw new Error(
      `a record for ${topic} has no partition: every record is pinned before sending`,
    );
  const headers = headersOf(m.headers);
  return {
    topic,
    partition: m.partition,
    key: m.key === null || m.key === undefined ? undefined : bytesOf(m.key),
    value: m.value === null ? null : bytesOf(m.value),
    ...(headers === undefined ? {} : { headers }),
    ...(m.timestamp === undefined ? {} : { timestamp: BigInt(m.timestamp) }),
  };
}

/** A request's records, in their order. */
export function libraryMessages(request: readonly TopicRecords[]): LibraryMessage[] {
  return request.flatMap(({ topic, messages }) => messages.map((m) => libraryMessage(topic, m)));
}

/** The records of `request` for one topic-partition, in their order. */
export function recordsOf(
  request: readonly TopicRecords[],
  topic: string,
  partition: number,
): OutRecord[] {
  return request
    .filter((r) => r.topic === topic)
    .flatMap((r) => r.messages.filter((m) => m.partition === partition));
}
