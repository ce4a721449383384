/**
 * Splits a batch's outputs into produce requests that each stay under the broker's record
 * batch limit.
 *
 * kafkajs writes all messages of one request for a partition as a single record batch, and the
 * broker refuses a record batch over `message.max.bytes` (1,048,588 B by default) with
 * MESSAGE_TOO_LARGE, on every retry. A fetched batch of up to `maxBytesPerPartition` input can
 * produce more than that (one changelog record of ~0.5 KB per touched session, all to one
 * changelog partition; dead letters, copies of the input records with headers), which would
 * stop its partition for good. Several requests inside the one transaction keep exactly-once
 * and the order of each topic's messages.
 */
import { Partitioners, type Message, type PartitionMetadata, type TopicMessages } from 'kafkajs';

/**
 * Estimated bytes per request. Below the default 1 MiB limit with room for what the estimate
 * leaves out (record batch headers, varint lengths above `RECORD_OVERHEAD`).
 */
export const REQUEST_BUDGET_BYTES = 768 * 1024;

/** A record's framing in the v2 format: length, attributes, deltas, key/value lengths. */
const RECORD_OVERHEAD = 24;

function size(x: Message['key'] | Message['value']): number {
  if (x === null || x === undefined) return 0;
  return typeof x === 'string' ? Buffer.byteLength(x) : x.length;
}

/** The bytes a message adds to a record batch, near enough to budget by. */
export function estimatedBytes(m: Message): number {
  let n = RECORD_OVERHEAD + size(m.key) + size(m.value);
  if (m.headers === undefined) return n; // verdicts, changelog: no allocation per message
  for (const [k, v] of Object.entries(m.headers)) {
    n += Buffer.byteLength(k) + 2;
    for (const one of Array.isArray(v) ? v : [v]) n += size(one as Buffer | string | undefined);
  }
  return n;
}

/**
 * The outputs, in order, as requests of at most `budget` estimated bytes each (a number, or per
 * topic: below the topic's record limit). A message larger than the budget goes alone in its
 * request (the broker decides whether it fits).
 */
export function outputRequests(
  outputs: readonly (readonly [string, readonly Message[]])[],
  budget: number | ((topic: string) => number) = REQUEST_BUDGET_BYTES,
): TopicMessages[][] {
  const requests: TopicMessages[][] = [];
  let request: TopicMessages[] = [];
  let bytes = 0;
  for (const [topic, messages] of outputs) {
    let current: TopicMessages | undefined;
    const limit = typeof budget === 'number' ? budget : budget(topic);
    for (const m of messages) {
      const n = estimatedBytes(m);
      if (bytes > 0 && bytes + n > limit) {
        requests.push(request);
        request = [];
        bytes = 0;
        current = undefined;
      }
      if (current === undefined) {
        current = { topic, messages: [] };
        request.push(current);
      }
      current.messages.push(m);
      bytes += n;
    }
  }
  if (request.length > 0) requests.push(request);
  return requests;
}

/**
 * A request's messages as one request per topic-partition, in their order. kafkajs 2.2.4 sends
 * a request's partitions to their leaders in parallel and retries as soon as one leader fails,
 * while another leader's produce may still be in flight: that produce then completes, and the
 * retry, having seen no answer from its broker yet, sends the same messages to it again under
 * the next sequence numbers. Both land in the one transaction, and only the later answer is
 * kept, so `sendProblems` cannot see it (seen in the soak: a spill request at two adjacent
 * offsets from one producer epoch, its verdict once). With one partition per request there is
 * no other leader to fail: a retry re-sends under the same sequence numbers, which the broker
 * deduplicates. Messages must be pinned (`pinPartitions`); unpinned ones stay together. Pure.
 */
export function onePartitionEach(request: readonly TopicMessages[]): TopicMessages[][] {
  const parts = new Map<string, TopicMessages>();
  for (const { topic, messages } of request)
    for (const m of messages) {
      const key = `${topic}/${m.partition ?? '?'}`;
      let part = parts.get(key);
      if (part === undefined) {
        part = { topic, messages: [] };
        parts.set(key, part);
      }
      part.messages.push(m);
    }
  return [...parts.values()].map((part) => [part]);
}

/** What kafkajs' sendBatch answers per partition (the part the check needs). */
export interface SentPartition {
  topicName: string;
  partition: number;
}

/**
 * What is wrong with a request's send results: topic-partitions it carried messages for that no
 * result acknowledges, and topic-partitions acknowledged more than once. kafkajs 2.2.4's retry
 * of a partly failed sendBatch skips every broker that already answered (tulios/kafkajs#1303):
 * a partition whose leader moved to such a broker is silently not sent (lost), and one that
 * moved from such a broker to another is sent again under a new sequence number (duplicated).
 * Seen on a 3-node cluster when a leader was killed; either way the transaction must abort.
 * Messages are given their partition before sending (`pinPartitions`), so this is exact. Pure.
 */
export function sendProblems(
  request: readonly TopicMessages[],
  results: readonly SentPartition[],
): { missing: string[]; repeated: string[] } {
  const acked = new Map<string, number>();
  for (const r of results) {
    const key = `${r.topicName}/${r.partition}`;
    acked.set(key, (acked.get(key) ?? 0) + 1);
  }
  const missing = new Set<string>();
  for (const { topic, messages } of request)
    for (const m of messages) {
      if (m.partition === undefined) continue; // not pinned: nothing exact to check
      const key = `${topic}/${m.partition}`;
      if (!acked.has(key)) missing.add(key);
    }
  const repeated = [...acked].filter(([, n]) => n > 1).map(([key]) => key);
  return { missing: [...missing], repeated };
}

const defaultPartitioner = Partitioners.DefaultPartitioner();
const metadataOf = new Map<number, PartitionMetadata[]>();

/**
 * Gives every message without a partition the one kafkajs' DefaultPartitioner would choose
 * for a topic of `counts.get(topic)` partitions (murmur2 of the key, as Java's client), so the
 * outputs land where they always did and `unacknowledged` knows every partition a request
 * carries. Topics of unknown size are left to kafkajs. Changes the messages in place.
 */
export function pinPartitions(
  outputs: Iterable<readonly [string, readonly Message[]]>,
  counts: ReadonlyMap<string, number>,
): void {
  for (const [topic, messages] of outputs) {
    const n = counts.get(topic);
    if (n === undefined) continue;
    let partitionMetadata = metadataOf.get(n);
    if (partitionMetadata === undefined) {
      partitionMetadata = Array.from({ length: n }, (_, partitionId) => ({
        partitionErrorCode: 0,
        partitionId,
        leader: 0,
        replicas: [],
        isr: [],
      }));
      metadataOf.set(n, partitionMetadata);
    }
    for (const m of messages)
      if (m.partition === undefined)
        (m as { partition?: number }).partition = defaultPartitioner({
          topic,
          partitionMetadata,
          message: m,
        });
  }
}
