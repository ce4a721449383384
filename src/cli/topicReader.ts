/**
 * Reads topics read_committed from chosen offsets (the current end, or the beginning), until
 * the end offsets seen at start or for as long as asked. Each reader joins a group of its own
 * (kafkajs has no consumer without one) and commits nothing.
 */
import { randomUUID } from 'node:crypto';
import type { InRecord } from '../kafka/transport';
import type { KafkaConnection } from '../kafka/transport/connection';
import { errorClass } from '../errors';

export interface ReadOptions {
  fromBeginning: boolean;
  /** false: stop once every partition reached the end offset it had at start. */
  follow: boolean;
  groupPrefix: string;
  onMessage(topic: string, partition: number, message: InRecord): void | Promise<void>;
}

export interface Reader {
  /** Resolves when the end was reached (no follow) or stop() was called. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export class MissingTopicError extends errorClass('TOPIC_MISSING') {}

export async function readTopics(
  kafka: KafkaConnection,
  topics: string[],
  o: ReadOptions,
): Promise<Reader> {
  const admin = kafka.admin();
  await admin.connect();
  const starts: { topic: string; partition: number; offset: string }[] = [];
  /** `topic:partition` → end offset (exclusive) still to reach. */
  const pending = new Map<string, bigint>();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0)
      throw new MissingTopicError(
        `topic ${missing.join(', ')} does not exist (has the processor run against this cluster? CG_*_TOPIC / --*-topic name others)`,
      );
    for (const topic of topics) {
      // The admin lists offsets read_committed: `high` is the last stable offset.
      for (const p of await admin.topicOffsets(topic)) {
        const start = o.fromBeginning ? p.low : p.high;
        starts.push({ topic, partition: p.partition, offset: start });
        if (BigInt(start) < BigInt(p.high)) pending.set(`${topic}:${p.partition}`, BigInt(p.high));
      }
    }
  } finally {
    await admin.disconnect();
  }
  const consumer = kafka.topicConsumer({
    groupId: `${o.groupPrefix}.${randomUUID()}`,
    topics,
    fromBeginning: o.fromBeginning,
    maxWaitMs: 250,
    commitOffsets: false,
    startAt: starts,
  });
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await consumer.stop();
      finish();
    })());
  const reached = (topic: string, partition: number, lastOffset: string) => {
    const key = `${topic}:${partition}`;
    const end = pending.get(key);
    if (end !== undefined && BigInt(lastOffset) + 1n >= end) pending.delete(key);
    if (!o.follow && pending.size === 0) void stop();
  };
  if (!o.follow && pending.size === 0) {
    finish();
    return { done, stop: async () => undefined };
  }
  await consumer.start({
    // Transaction markers are never delivered as messages; a batch's lastOffset includes them.
    batchEnd: reached,
    eachRecord: async (topic, partition, message) => {
      const end = pending.get(`${topic}:${partition}`);
      if (!o.follow && (end === undefined || BigInt(message.offset) >= end)) return;
      await o.onMessage(topic, partition, message);
      reached(topic, partition, message.offset);
    },
  });
  return { done, stop };
}
