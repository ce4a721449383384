/**
 * Upstream: none found filed. kafkajs 2.2.4's murmur2 (src/producer/partitioners/default/
 * murmur2.js) multiplies its `Long`, a BigInt that is never truncated to 64 bits, so the hash
 * grows by 32 bits per 4 bytes of key and its time is quadratic in the key: ~0.6 s for a 64 KiB
 * key, minutes for a few hundred kilobytes, the event loop blocked all along (bench/README,
 * murmur2). Its result is right; only its time is wrong. Applies to kafkajs 2.2.4.
 *
 * Every message our producers send is placed here instead, by Kafka's default partitioner on
 * our own murmur2 (src/kafka/murmur2.ts, 32-bit arithmetic, linear): where kafkajs would have
 * placed it, in time linear in its key (docs/decisions.md 144).
 */
import { randomInt } from 'node:crypto';
import type { ICustomPartitioner, Message } from 'kafkajs';
import { keyPartition } from '../murmur2';

const nextUnkeyed = new Map<string, number>();

/**
 * The partition Kafka's default partitioner gives `message` in `topic` of `n` partitions: its
 * own partition if it has one; for a key, `toPositive(murmur2(key bytes)) % n` as Java's client
 * computes it; for no key, the next partition in turn from a random start per topic (as kafkajs'
 * DefaultPartitioner, which goes round its available partitions).
 */
export function defaultPartition(topic: string, n: number, message: Message): number {
  if (message.partition !== undefined && message.partition !== null) return message.partition;
  const { key } = message;
  if (key !== null && key !== undefined) return keyPartition(key, n);
  const i = ((nextUnkeyed.get(topic) ?? randomInt(0x7fffffff)) + 1) & 0x7fffffff;
  nextUnkeyed.set(topic, i);
  return i % n;
}

/**
 * kafkajs' `createPartitioner` for our producers: `defaultPartition` on the topic's partitions as
 * kafkajs knows them (the DefaultPartitioner's placement, without its murmur2).
 */
export const murmur2Partitioner: ICustomPartitioner =
  () =>
  ({ topic, partitionMetadata, message }) =>
    defaultPartition(topic, partitionMetadata.length, message);
