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
import type { OutRecord, TopicRecords } from './transport';

/**
 * Estimated bytes per request. Below the default 1 MiB limit with room for what the estimate
 * leaves out (record batch headers, varint lengths above `RECORD_OVERHEAD`).
 */
export const REQUEST_BUDGET_BYTES = 768 * 1024;

/** A record's framing in the v2 format: length, attributes, deltas, key/value lengths. */
const RECORD_OVERHEAD = 24;

function size(x: OutRecord['key'] | OutRecord['value']): number {
  if (x === null || x === undefined) return 0;
  return typeof x === 'string' ? Buffer.byteLength(x) : x.length;
}

/** The bytes a message adds to a record batch, near enough to budget by. */
export function estimatedBytes(m: OutRecord): number {
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
  outputs: readonly (readonly [string, readonly OutRecord[]])[],
  budget: number | ((topic: string) => number) = REQUEST_BUDGET_BYTES,
): TopicRecords[][] {
  const requests: TopicRecords[][] = [];
  let request: TopicRecords[] = [];
  let bytes = 0;
  for (const [topic, messages] of outputs) {
    let current: TopicRecords | undefined;
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
