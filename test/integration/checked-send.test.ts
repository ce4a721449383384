/**
 * checkedSend (src/kafka/kafkajs/checkedSend.ts) against the real broker: pinning the messages itself
 * puts every key where kafkajs' own partitioner puts it (the processor's KEY_MISMATCH check and
 * every session's order depend on that), and each key's messages arrive once, in order. The
 * re-send of unacknowledged partitions needs a leader move on a cluster (kafkajs#1303): the
 * cluster suite's load producer exercises it; its selection is unit-tested
 * (test/unit/checked-send.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { Partitioners, type Message } from 'kafkajs';
import pino from 'pino';
import { checkedSend } from '../../src/kafka/kafkajs/checkedSend';
import { kafka, readMessages } from './pipeline';

const PARTITIONS = 3;

/** Every record of `topic` as key → [partition, value] in offset order per partition. */
async function readAll(topic: string, count: number): Promise<Map<string, [number, string][]>> {
  const byKey = new Map<string, [number, string][]>();
  let n = 0;
  await readMessages([topic], ({ partition, message }) => {
    const key = message.key!.toString();
    byKey.set(key, [...(byKey.get(key) ?? []), [partition, message.value!.toString()]]);
    return ++n >= count;
  });
  return byKey;
}

describe('checkedSend on the real broker', () => {
  it("puts each key on the partition kafkajs' own partitioner picks, every message once and in order, acknowledged in one send", async () => {
    const id = randomUUID().slice(0, 8);
    const [checked, plain] = [`checked-${id}`, `plain-${id}`];
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [checked, plain].map((topic) => ({ topic, numPartitions: PARTITIONS })),
    });
    const batches: Message[][] = Array.from({ length: 3 }, (_, b) =>
      Array.from({ length: 400 }, (_, i) => ({ key: `s-${i % 97}`, value: `${b}-${i}` })),
    );
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    try {
      const reports = [];
      for (const messages of batches) {
        reports.push(
          await checkedSend(
            producer,
            [{ topic: checked, messages: messages.map((m) => ({ ...m })) }],
            {
              partitionCounts: new Map([[checked, PARTITIONS]]),
              log: pino({ level: 'warn' }),
            },
          ),
        );
        await producer.send({ topic: plain, acks: -1, messages: messages.map((m) => ({ ...m })) });
      }
      expect(reports).toEqual(batches.map(() => ({ rounds: 1, repeated: [] })));
    } finally {
      await producer.disconnect();
    }
    const total = batches.flat().length;
    const [got, reference] = [await readAll(checked, total), await readAll(plain, total)];
    await admin.deleteTopics({ topics: [checked, plain] }).catch(() => undefined);
    await admin.disconnect();
    // The same partition per key as kafkajs chose unpinned, and each key's values in send order.
    expect(got).toEqual(reference);
    const sent = new Map<string, string[]>();
    for (const m of batches.flat())
      sent.set(String(m.key), [...(sent.get(String(m.key)) ?? []), String(m.value)]);
    expect(new Map([...got].map(([k, v]) => [k, v.map(([, value]) => value)]))).toEqual(sent);
    expect(new Set([...got.values()].flatMap((v) => v.map(([p]) => p))).size).toBe(PARTITIONS);
  });
});
