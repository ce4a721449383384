/**
 * Restoring per-partition session state from the compacted changelog (contract §8: state moves
 * with its partition). kafkajs has no manual partition assignment, so a short-lived consumer
 * in a group of its own reads the changelog. Where "the end" is: before reading, the new owner
 * writes a barrier record (a unique nonce) to the partition in a committed transaction of its
 * freshly initialised (zombie-fencing) producer; everything before the barrier is stable, so the
 * partition is restored once the barrier is read back.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from 'kafkajs';
import type { SessionStates } from './sessionStates';

/** Changelog key of barrier records; no sessionId can be this (it starts with a NUL). */
export const BARRIER_KEY = '\u0000restore-barrier';

export async function writeBarrier(
  producer: Producer,
  topic: string,
  partition: number,
): Promise<string> {
  const nonce = randomUUID();
  const txn = await producer.transaction();
  try {
    await txn.send({ topic, messages: [{ key: BARRIER_KEY, value: nonce, partition }] });
    await txn.commit();
  } catch (e) {
    await txn.abort().catch(() => undefined);
    throw e;
  }
  return nonce;
}

export interface RestoreTarget {
  partition: number;
  nonce: string;
  states: SessionStates;
}

/**
 * Fetch sizes of the restore consumer: large, so that a restore is a few big reads (kafkajs'
 * defaults, 1 MiB per partition and 10 MiB per fetch, make it many small round trips).
 */
export const RESTORE_MAX_BYTES_PER_PARTITION = 16 * 1024 * 1024;
export const RESTORE_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Reads the changelog until each target's barrier; fills `states` with each session's
 * serialized state, decoded on its first use (tombstones delete).
 */
export async function restorePartitions(
  kafka: Kafka,
  topic: string,
  groupPrefix: string,
  targets: RestoreTarget[],
  timeoutMs: number,
): Promise<void> {
  if (targets.length === 0) return;
  const pending = new Map(targets.map((t) => [t.partition, t]));
  const consumer = kafka.consumer({
    groupId: `${groupPrefix}.restore.${randomUUID()}`,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: RESTORE_MAX_BYTES_PER_PARTITION,
    maxBytes: RESTORE_MAX_BYTES,
    maxWaitTimeInMs: 100,
  });
  let finish!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const timer = setTimeout(
    () =>
      fail(
        new Error(
          `state restore of ${topic} partitions ${[...pending.keys()].join(',')} timed out after ${timeoutMs} ms`,
        ),
      ),
    timeoutMs,
  );
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: targets.length,
      eachBatch: async ({ batch }) => {
        const target = pending.get(batch.partition);
        if (!target) {
          if (!targets.some((t) => t.partition === batch.partition))
            consumer.pause([{ topic, partitions: [batch.partition] }]);
          return;
        }
        for (const m of batch.messages) {
          const key = m.key?.toString('utf8') ?? '';
          if (key === BARRIER_KEY) {
            if (m.value?.toString('utf8') === target.nonce) {
              pending.delete(batch.partition);
              consumer.pause([{ topic, partitions: [batch.partition] }]);
              if (pending.size === 0) finish();
              return;
            }
            continue;
          }
          if (m.value === null) target.states.delete(key);
          else target.states.setSerialized(key, m.value);
        }
      },
    });
    await done;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => undefined);
  }
}
