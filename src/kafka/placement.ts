/**
 * Where each record a producer of ours sends goes: Kafka's default partitioner on our own
 * murmur2 (src/kafka/murmur2.ts, linear in the key; docs/decisions.md 144), the same for every
 * Kafka client behind the transport. Records are pinned before they are sent, so that a
 * transport can check each request's results partition by partition.
 */
import { randomInt } from 'node:crypto';
import { keyPartition } from './murmur2';
import type { OutRecord } from './transport/records';

const nextUnkeyed = new Map<string, number>();

/**
 * The partition Kafka's default partitioner gives `message` in `topic` of `n` partitions: its
 * own partition if it has one; for a key, `toPositive(murmur2(key bytes)) % n` as Java's client
 * computes it; for no key, the next partition in turn from a random start per topic (as kafkajs'
 * DefaultPartitioner, which goes round its available partitions).
 */
export function defaultPartition(topic: string, n: number, message: OutRecord): number {
  if (message.partition !== undefined && message.partition !== null) return message.partition;
  const { key } = message;
  if (key !== null && key !== undefined) return keyPartition(key, n);
  const i = ((nextUnkeyed.get(topic) ?? randomInt(0x7fffffff)) + 1) & 0x7fffffff;
  nextUnkeyed.set(topic, i);
  return i % n;
}

/**
 * Gives every message without a partition the one Kafka's default partitioner would choose
 * for a topic of `counts.get(topic)` partitions (`defaultPartition`: murmur2 of the key, as
 * Java's client), so the outputs land where they always did and `unacknowledged` knows every
 * partition a request carries. Topics of unknown size are left to the client. Changes the
 * messages in place.
 */
export function pinPartitions(
  outputs: Iterable<readonly [string, readonly OutRecord[]]>,
  counts: ReadonlyMap<string, number>,
): void {
  for (const [topic, messages] of outputs) {
    const n = counts.get(topic);
    if (n === undefined) continue;
    for (const m of messages)
      if (m.partition === undefined)
        (m as { partition?: number }).partition = defaultPartition(topic, n, m);
  }
}

/**
 * The topic-partitions (`topic/partition`) a produce request carries records for, once each,
 * in the order first met: what every transport checks a request's acknowledgements against,
 * and what a shared transaction keeps apart within one round. Any client's request shape.
 */
export function requestPartitions(
  request: readonly { topic: string; messages: readonly { partition?: number | null }[] }[],
): Set<string> {
  const keys = new Set<string>();
  for (const { topic, messages } of request)
    for (const m of messages) keys.add(`${topic}/${m.partition}`);
  return keys;
}
