/**
 * Kafka's default partitioner, as the Java client computes it: murmur2 of the key bytes
 * (`org.apache.kafka.common.utils.Utils.murmur2`), made positive (`& 0x7fffffff`), modulo the
 * topic's partition count. In 32-bit arithmetic (`Math.imul`), so linear in the key: kafkajs
 * 2.2.4's murmur2 multiplies BigInts without truncating them to 64 bits, and its time grows
 * faster than the key (minutes for a key of a few hundred kilobytes, an event loop blocked
 * meanwhile; docs/decisions.md 144). Pure.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Java's `Utils.murmur2(data)`: a signed 32-bit integer. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // Java's switch on length % 4, falling through from case 3 to case 1.
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[tail + 2]! << 16;
    if (rest >= 2) h ^= data[tail + 1]! << 8;
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** The bytes a Kafka client hashes for a key: a string's UTF-8 encoding. */
export function keyBytes(key: Buffer | string): Buffer {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
}

/**
 * The partition Kafka's default partitioner gives a non-null key in a topic of `partitions`
 * partitions: `toPositive(murmur2(key)) % partitions`.
 */
export function keyPartition(key: Buffer | string, partitions: number): number {
  if (!Number.isSafeInteger(partitions) || partitions < 1)
    throw new RangeError(`a topic has at least one partition, not ${partitions}`);
  return (murmur2(keyBytes(key)) & 0x7fffffff) % partitions;
}
