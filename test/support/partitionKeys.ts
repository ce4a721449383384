/**
 * Keys for a given partition, as Kafka's default partitioner places them (murmur2 of the key
 * bytes, src/kafka/murmur2.ts): a test that writes records straight to one partition gives them
 * keys of that partition, or the processor dead-letters them WRONG_PARTITION (contract §6).
 */
import { keyPartition } from '../../src/kafka/murmur2';

/** `name` if it maps to `partition` of `partitions`, else the first `name-1`, `name-2`... that does. */
export function keyOn(name: string, partition: number, partitions: number): string {
  for (let i = 0; ; i++) {
    const key = i === 0 ? name : `${name}-${i}`;
    if (keyPartition(key, partitions) === partition) return key;
  }
}

/**
 * `length` bytes of one repeated letter (a, b, c...) that map to `partition` of `partitions`
 * (`home`) or to another partition (`away`).
 */
export function longKey(
  length: number,
  partition: number,
  partitions: number,
  where: 'home' | 'away',
): Buffer {
  for (let letter = 0x61; letter <= 0x7a; letter++) {
    const key = Buffer.alloc(length, letter);
    if ((keyPartition(key, partitions) === partition) === (where === 'home')) return key;
  }
  throw new Error(`no key of ${length} repeated letters maps ${where} to partition ${partition}`);
}
