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
import type { ICustomPartitioner } from 'kafkajs';
import { defaultPartition } from '../placement';

/**
 * kafkajs' `createPartitioner` for our producers: `defaultPartition` on the topic's partitions as
 * kafkajs knows them (the DefaultPartitioner's placement, without its murmur2).
 */
export const murmur2Partitioner: ICustomPartitioner =
  () =>
  ({ topic, partitionMetadata, message }) =>
    defaultPartition(topic, partitionMetadata.length, message);
