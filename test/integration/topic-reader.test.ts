/**
 * The on-call commands' topic reader (src/cli/topicReader.ts) on the client the suite runs on
 * (CG_KAFKA_CLIENT): each record of a finished topic exactly once, from the beginning or from
 * the end. On platformatic the reader's seeks, made after `start`, came after the first
 * topics' first batches had been handed over (`start` places every topic's partitions before
 * it returns, one topic after another), and each seek back to the start read those records
 * again: `tail all --json` printed an audit record twice in 3 of 16 runs of oncall.test.ts.
 * The reader now passes its starts in (`startAt`), so the first fetch already reads from them.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { readTopics } from '../../src/cli/topicReader';
import { loadConfig } from '../../src/config/config';
import { kafkaClient } from '../../src/kafka/client';
import type { KafkaConnection } from '../../src/kafka/transport/connection';
import { brokers, kafka, testKafkaClient } from './pipeline';

jest.setTimeout(120_000);

const TOPICS = 3;
const PARTITIONS = 2;
const PER_PARTITION = 40;
/** Reads of the same topic: the race it guards against showed in about 1 read in 4. */
const READS = 8;

let connection: KafkaConnection;
let topics: string[];

beforeAll(async () => {
  const run = randomUUID().slice(0, 8);
  topics = Array.from({ length: TOPICS }, (_, t) => `cg-topic-reader-${run}-${t}`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS })),
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  try {
    // Several sends per partition, so that a partition holds several record batches.
    for (let round = 0; round < 4; round++)
      for (const topic of topics)
        for (let partition = 0; partition < PARTITIONS; partition++)
          await producer.send({
            topic,
            acks: -1,
            messages: Array.from({ length: PER_PARTITION / 4 }, (_, i) => ({
              partition,
              value: `p${partition}-r${round}-${i}`,
            })),
          });
  } finally {
    await producer.disconnect();
  }
  // The settings' defaults (plaintext), on the client the suite runs on.
  const settings = loadConfig({ CG_KAFKA_CLIENT: testKafkaClient() });
  connection = await kafkaClient(
    brokers,
    'cg-topic-reader-test',
    pino({ level: 'silent' }),
    settings,
  );
});

async function readAll(fromBeginning: boolean): Promise<string[]> {
  const seen: string[] = [];
  const reader = await readTopics(connection, topics, {
    fromBeginning,
    follow: false,
    groupPrefix: 'cg-topic-reader-test',
    // A handler that takes a moment (a terminal, a pipe), so that a partition is still being
    // read when the last topic is placed.
    onMessage: async (topic, partition, m) => {
      seen.push(`${topic}/${partition}@${m.offset}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    },
  });
  await reader.done;
  await reader.stop();
  return seen;
}

test(`from the beginning, ${READS} reads of ${TOPICS} finished topics each give every record exactly once`, async () => {
  const expected = topics
    .flatMap((topic) =>
      Array.from({ length: PARTITIONS }, (_, p) =>
        Array.from({ length: PER_PARTITION }, (_, o) => `${topic}/${p}@${o}`),
      ),
    )
    .flat()
    .sort();
  for (let read = 0; read < READS; read++) {
    const seen = await readAll(true);
    expect({ read, records: [...seen].sort() }).toEqual({ read, records: expected });
  }
});

test('from the end, a read of finished topics gives nothing and ends', async () => {
  expect(await readAll(false)).toEqual([]);
});

test('from the end, following: only the records written after the start, each once', async () => {
  const seen: string[] = [];
  const reader = await readTopics(connection, topics, {
    fromBeginning: false,
    follow: true,
    groupPrefix: 'cg-topic-reader-test',
    onMessage: (topic, partition, m) => void seen.push(`${topic}/${partition}@${m.offset}`),
  });
  try {
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    try {
      await producer.send({
        topic: topics[1]!,
        acks: -1,
        messages: [0, 1, 2].map((i) => ({ partition: 1, value: `late-${i}` })),
      });
    } finally {
      await producer.disconnect();
    }
    const deadline = Date.now() + 30_000;
    while (seen.length < 3 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    // Room for a repeat to show.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    await reader.stop();
  }
  const at = PER_PARTITION;
  expect(seen).toEqual([0, 1, 2].map((i) => `${topics[1]}/1@${at + i}`));
});
