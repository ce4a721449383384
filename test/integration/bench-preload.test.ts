/**
 * The benchmarks' pre-loader (bench/kafka-common.ts `preload`) must keep every key's messages
 * in the order given: the e2e and scale-out benchmarks replay a simulated fleet, and a session
 * whose events arrive out of order is decided as SEQ_CONFLICT / EVENT_GAP, so the benchmark
 * would measure a different workload (four concurrent sends of one kafkajs producer reorder
 * about 27 % of the events).
 */
import { randomUUID } from 'node:crypto';
import type { Message } from 'kafkajs';
import { createTopic, preload } from '../../bench/kafka-common';
import { kafka } from './pipeline';

const KEYS = 300;
const PER_KEY = 100;
const PAD = 'x'.repeat(200);

describe('bench preload', () => {
  it('keeps every key in order across 6 partitions and several requests per partition', async () => {
    const topic = `bench-preload-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    const consumer = kafka.consumer({ groupId: `bench-preload-${randomUUID()}` });
    try {
      await createTopic(admin, topic, 6);
      // Interleaved as a fleet is: key k's i-th message sits among every other key's i-th.
      // ~230 B each, so each partition's ~1.1 MB takes more than one produce request.
      const messages: Message[] = [];
      for (let i = 0; i < PER_KEY; i++) {
        for (let k = 0; k < KEYS; k++) messages.push({ key: `k${k}`, value: `${i}:${PAD}` });
      }
      await preload(kafka, topic, messages);

      const next = new Map<string, number>();
      const misplaced: string[] = [];
      let seen = 0;
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const done = new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message, partition }) => {
            const key = message.key!.toString();
            const value = Number(message.value!.toString().split(':')[0]);
            const expected = next.get(key) ?? 0;
            if (value !== expected) {
              misplaced.push(
                `${key}: ${value} at p${partition}@${message.offset}, wanted ${expected}`,
              );
            }
            next.set(key, value + 1);
            if (++seen === messages.length) resolve();
          },
        });
      });
      await done;
      expect(misplaced.slice(0, 5)).toEqual([]);
      expect(next.size).toBe(KEYS);
      expect([...next.values()].every((n) => n === PER_KEY)).toBe(true);
    } finally {
      await consumer.disconnect();
      await admin.disconnect();
    }
  }, 60_000);
});
