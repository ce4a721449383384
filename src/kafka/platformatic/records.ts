/**
 * One partition of a raw Fetch response, as @platformatic/kafka decodes it, made the transport's
 * FetchedBatch (src/kafka/transport/records.ts), read_committed filtered as the Java consumer
 * does it. The library's own filter delivers aborted records (bench/probes/platformatic/
 * README.md, gap10): it keeps one aborted range per producer and response, and none whose abort
 * marker lies beyond the response. It also drops committed ones (gap 13): see
 * libraryMayHaveDropped. Pure: no I/O.
 */
import type { fetchV17, KafkaRecord, RecordsBatch } from '@platformatic/kafka';
import type { FetchedBatch, InRecord, RecordHeaders } from '../transport/records';

/** What of a partition's fetch response the conversion reads. */
export type RawPartition = Pick<
  fetchV17.FetchResponsePartition,
  'highWatermark' | 'abortedTransactions' | 'records'
>;

type AbortedTransaction = fetchV17.FetchResponsePartitionAbortedTransaction;

// Record batch attributes (message format v2), Kafka's own bits; taken as numbers here so that
// this pure module loads nothing of the client.
const LOG_APPEND_TIME = 1 << 3;
const TRANSACTIONAL = 1 << 4;
const CONTROL = 1 << 5;
/** A control record's key: int16 version, int16 type (0: abort, 1: commit). */
const ABORT_TYPE = 0;

export const batchLastOffset = (b: RecordsBatch): bigint =>
  b.firstOffset + BigInt(b.lastOffsetDelta);

const isControl = (b: RecordsBatch) => (b.attributes & CONTROL) !== 0;
const isTransactional = (b: RecordsBatch) => (b.attributes & TRANSACTIONAL) !== 0;

function isAbortMarker(b: RecordsBatch): boolean {
  const key = b.records[0]?.key;
  return key != null && key.length >= 4 && key.readInt16BE(2) === ABORT_TYPE;
}

/**
 * The batches a read_committed reader may see, in order, control batches left out. As Kafka's
 * Java consumer (CompletedFetch): the aborted transactions, by first offset, enter the aborted
 * set of their producer once the walk reaches them; a transactional batch of a producer in it is
 * dropped; that producer's abort marker takes it out again. Several aborted transactions of one
 * producer in one response are each filtered, and one whose marker is beyond the response too.
 */
export function committedBatches(
  batches: readonly RecordsBatch[],
  aborted: readonly AbortedTransaction[] | null,
): RecordsBatch[] {
  const pending = [...(aborted ?? [])].sort((a, b) =>
    a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
  );
  let next = 0;
  const abortedProducers = new Set<bigint>();
  const kept: RecordsBatch[] = [];
  for (const b of batches) {
    const last = batchLastOffset(b);
    while (next < pending.length && pending[next]!.firstOffset <= last) {
      abortedProducers.add(pending[next]!.producerId);
      next += 1;
    }
    if (isControl(b)) {
      if (isAbortMarker(b)) abortedProducers.delete(b.producerId);
      continue;
    }
    if (isTransactional(b) && abortedProducers.has(b.producerId)) continue;
    kept.push(b);
  }
  return kept;
}

/**
 * Whether @platformatic/kafka's own filter may have dropped committed batches of this
 * read_committed response (gap 13, bench/probes/platformatic/README.md). Before the transport
 * sees a response, the library drops every batch of a listed producer from the first offset of
 * its last listed aborted transaction up to its last abort marker in the response. That is one
 * transaction only if every abort marker had data of its own in the partition. Kafka writes the
 * marker to every partition the transaction added, even when nothing of it landed there (its
 * produce refused, its data truncated by a leader change, its producer killed between
 * AddPartitionsToTxn and Produce). The broker does not list such a transaction, and the range
 * then reaches back across the committed transactions before it. So a response holding an abort
 * marker of a listed producer is not trusted.
 */
export function libraryMayHaveDropped(raw: RawPartition): boolean {
  const listed = new Set((raw.abortedTransactions ?? []).map((a) => a.producerId));
  if (listed.size === 0) return false;
  return (raw.records ?? []).some(
    (b) => isControl(b) && isAbortMarker(b) && listed.has(b.producerId),
  );
}

/**
 * The read_committed response with the library's filter undone: the batches of a
 * read_uncommitted fetch from the same offset, up to the last offset the read_committed one
 * reached (its aborted-transaction list speaks for no further, and everything up to there is
 * below its last stable offset). committedBatches then filters them with that list.
 */
export function withUnfilteredBatches<P extends RawPartition>(
  committed: P,
  uncommitted: readonly RecordsBatch[],
): P {
  const last = committed.records?.at(-1);
  if (last === undefined) return committed;
  const reach = batchLastOffset(last);
  return { ...committed, records: uncommitted.filter((b) => batchLastOffset(b) <= reach) };
}

/**
 * Headers by name; a name given more than once keeps every value, in order, as an array (as
 * kafkajs delivers them). A null value is delivered as `undefined` (absent).
 */
export function headersOf(entries: KafkaRecord['headers']): RecordHeaders {
  const headers: RecordHeaders = {};
  for (const [k, v] of entries) {
    const name = k?.toString('utf8') ?? '';
    const value = v ?? undefined;
    const before = headers[name];
    if (!(name in headers)) headers[name] = value;
    else if (Array.isArray(before)) before.push(value as Buffer);
    else headers[name] = [before as Buffer, value as Buffer];
  }
  return headers;
}

function recordsOf(b: RecordsBatch, from: bigint): InRecord[] {
  const logAppendTime = (b.attributes & LOG_APPEND_TIME) !== 0;
  const out: InRecord[] = [];
  for (const r of b.records) {
    const offset = b.firstOffset + BigInt(r.offsetDelta);
    // A batch is fetched whole: the records before the position asked for were read already.
    if (offset < from) continue;
    out.push({
      key: r.key ?? null,
      value: r.value ?? null,
      headers: headersOf(r.headers),
      offset: offset.toString(),
      timestamp: (logAppendTime ? b.maxTimestamp : b.firstTimestamp + r.timestampDelta).toString(),
    });
  }
  return out;
}

/**
 * The fetched batch of one partition read from `from`; null when the response held no batch.
 * `lastOffset()` is the last offset fetched, aborted and control records included, so that the
 * position moves past them even when nothing is left to deliver.
 */
export function fetchedBatch(
  topic: string,
  partition: number,
  raw: RawPartition,
  from: bigint,
): FetchedBatch | null {
  const batches = raw.records ?? [];
  const lastBatch = batches[batches.length - 1];
  if (lastBatch === undefined) return null;
  const last = batchLastOffset(lastBatch).toString();
  const messages = committedBatches(batches, raw.abortedTransactions).flatMap((b) =>
    recordsOf(b, from),
  );
  return {
    topic,
    partition,
    highWatermark: raw.highWatermark.toString(),
    messages,
    firstOffset: () => messages[0]?.offset ?? null,
    lastOffset: () => last,
  };
}
