/**
 * The transactional producer on @platformatic/kafka (src/kafka/platformatic/
 * transactionalProducer.ts) on the real broker: a restarted transactionalId initialises and
 * fences its previous producer; records and a group's offsets commit together and a
 * read_committed kafkajs consumer sees the committed records (UTF-8 headers and timestamps as
 * sent) and not the aborted ones; offsets sent with a generation the group has left behind are
 * refused (KIP-447) as a fencing; a record too large for its topic fails with the topic named;
 * and the process-wide SharedTransactions (src/kafka/sharedTransactions.ts) over it commits
 * several partitions' batches in fewer transactions than batches.
 * The group member is the library's own Consumer, as bench/probes/platformatic/gap4-kip447.mjs
 * has it.
 */
import { randomUUID } from 'node:crypto';
import { Consumer, MessagesStreamModes, type BaseOptions } from '@platformatic/kafka';
import { platformaticTransactionalProducer } from '../../src/kafka/platformatic/transactionalProducer';
import { SharedTransactions } from '../../src/kafka/sharedTransactions';
import { commitBatch } from '../../src/kafka/transaction';
import {
  ProducerFencedError,
  RecordTooLargeError,
  type GroupMetadata,
  type TransactionalProducer,
} from '../../src/kafka/transport';
import { brokers, kafka, readMessages } from './pipeline';

jest.setTimeout(120_000);

const RUN = randomUUID().slice(0, 8);
const IN = `cg-plat-in-${RUN}`;
const OUT = `cg-plat-out-${RUN}`;
const SMALL = `cg-plat-small-${RUN}`;
const GROUP = `cg-plat-group-${RUN}`;
const base: BaseOptions = { clientId: `cg-plat-test-${RUN}`, bootstrapBrokers: brokers };

const members: Consumer[] = [];
const producers: TransactionalProducer[] = [];

/** A producer of `transactionalId` whose offsets go through the members of GROUP. */
function producerOf(
  transactionalId: string,
  onRequest?: (api: string, ms: number) => void,
): TransactionalProducer {
  const p = platformaticTransactionalProducer(
    base,
    {
      transactionalId,
      transactionTimeoutMs: 10_000,
      retryMs: 100,
      ...(onRequest === undefined ? {} : { onRequest }),
    },
    (groupId) => (groupId === GROUP ? members[0] : undefined),
  );
  producers.push(p);
  return p;
}

/** A member of GROUP consuming IN, joined (it has a generation and a coordinator). */
async function joinedMember(name: string): Promise<Consumer> {
  const c = new Consumer({
    groupId: GROUP,
    clientId: `${base.clientId}-${name}`,
    bootstrapBrokers: brokers,
    sessionTimeout: 10_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
  });
  members.push(c);
  const stream = await c.consume({
    topics: [IN],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
    maxWaitTime: 200,
  });
  stream.on('data', () => undefined);
  await until(() => c.generationId > 0 && c.memberId !== null && c.coordinatorId !== null);
  return c;
}

async function until(holds: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const groupOf = (c: Consumer): GroupMetadata => ({
  groupId: GROUP,
  generationId: c.generationId,
  memberId: c.memberId,
});

/** The values of `topic` read_committed, up to and including the value `last`. */
async function committedValues(
  topic: string,
  last: string,
): Promise<{ value: string; headers: Record<string, string>; timestamp: string }[]> {
  const seen: { value: string; headers: Record<string, string>; timestamp: string }[] = [];
  await readMessages(
    [topic],
    ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      seen.push({ value: String(message.value), headers, timestamp: message.timestamp });
      return String(message.value) === last;
    },
    30_000,
  );
  return seen;
}

/**
 * Commits `value` to OUT partition 0 alone: an end marker for `committedValues`, after the
 * records of each test (all on partition 0, so read in order before it).
 */
async function commitMarker(p: TransactionalProducer, value: string): Promise<void> {
  const txn = await p.transaction();
  await txn.send([{ topic: OUT, messages: [{ value, partition: 0 }] }]);
  await txn.commit();
}

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: IN, numPartitions: 4 },
      { topic: OUT, numPartitions: 2 },
      {
        topic: SMALL,
        numPartitions: 1,
        configEntries: [{ name: 'max.message.bytes', value: '2048' }],
      },
    ],
    waitForLeaders: true,
  });
  await admin.disconnect();
});

afterAll(async () => {
  for (const p of producers) await p.disconnect().catch(() => undefined);
  for (const c of members) await c.close(true).catch(() => undefined);
});

it('a restarted transactionalId initialises, and fences the producer it replaces', async () => {
  const id = `cg-plat-restart-${RUN}`;
  const first = producerOf(id);
  await first.connect();
  await commitMarker(first, 'first');

  const second = producerOf(id);
  await second.connect();
  const txn = await first.transaction();
  const refused = await txn
    .send([{ topic: OUT, messages: [{ value: 'zombie', partition: 0 }] }])
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ProducerFencedError);
  expect(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']).toContain(
    (refused as ProducerFencedError).type,
  );
  // Fenced for good: the library producer is closed, and every call says so.
  await expect(first.transaction()).rejects.toBeInstanceOf(ProducerFencedError);

  await commitMarker(second, 'second');
  const values = (await committedValues(OUT, 'second')).map((r) => r.value);
  expect(values).toEqual(expect.arrayContaining(['first', 'second']));
  expect(values).not.toContain('zombie');
});

it('commits records and the group offset together; read_committed sees them and not an aborted transaction', async () => {
  const member = await joinedMember('a');
  const requests: string[] = [];
  const p = producerOf(`cg-plat-commit-${RUN}`, (api) => requests.push(api));
  await p.connect();

  const aborted = await p.transaction();
  await aborted.send([{ topic: OUT, messages: [{ value: 'aborted', partition: 0 }] }]);
  await aborted.abort();

  const txn = await p.transaction();
  await txn.send([
    {
      topic: OUT,
      messages: [
        {
          key: 'k',
          value: 'committed',
          partition: 0,
          headers: { 'h-é': 'vålue' },
          timestamp: '1733400000123',
        },
      ],
    },
  ]);
  await txn.sendOffsets([{ topic: IN, partition: 0, offset: '3' }], groupOf(member));
  await txn.commit();
  await commitMarker(p, 'commit-end');

  const seen = await committedValues(OUT, 'commit-end');
  expect(seen.map((r) => r.value)).not.toContain('aborted');
  expect(seen.find((r) => r.value === 'committed')).toEqual({
    value: 'committed',
    headers: { 'h-é': 'vålue' },
    timestamp: '1733400000123',
  });
  const admin = kafka.admin();
  await admin.connect();
  const [offsets] = await admin.fetchOffsets({ groupId: GROUP, topics: [IN] });
  await admin.disconnect();
  expect(offsets!.partitions.find((x) => x.partition === 0)?.offset).toBe('3');
  // The trace of the client's requests (its diagnostics channel), as kafkajs' REQUEST event.
  expect(requests).toEqual(
    expect.arrayContaining(['InitProducerId', 'Produce', 'TxnOffsetCommit', 'EndTxn']),
  );
});

it('shared transactions over it: batches of four partitions committed at once share transactions, records and offsets all committed', async () => {
  const member = members[0] ?? (await joinedMember('a'));
  let endTxns = 0;
  const shared = new SharedTransactions(() =>
    producerOf(`cg-plat-shared-${RUN}`, (api) => void (api === 'EndTxn' && endTxns++)),
  );
  const values = (i: number) => [0, 1, 2].map((j) => `shared-${i}-${j}`);
  const facades = [0, 1, 2, 3].map((i) => shared.forPartition(i));
  await Promise.all(facades.map((f) => f.connect()));
  await Promise.all(
    facades.map((f, i) =>
      commitBatch(f, {
        sends: new Map([[OUT, values(i).map((value) => ({ key: value, value }))]]),
        group: groupOf(member),
        topic: IN,
        partition: i,
        nextOffset: String(10 + i),
        partitionCounts: new Map([[OUT, 2]]),
      }),
    ),
  );
  await shared.close();
  expect(endTxns).toBeLessThan(facades.length);

  const expected = new Set([0, 1, 2, 3].flatMap(values));
  const seen = new Set<string>();
  await readMessages(
    [OUT],
    ({ message }) => {
      if (expected.has(String(message.value))) seen.add(String(message.value));
      return seen.size === expected.size;
    },
    30_000,
  );
  expect([...seen].sort()).toEqual([...expected].sort());
  const admin = kafka.admin();
  await admin.connect();
  const [offsets] = await admin.fetchOffsets({ groupId: GROUP, topics: [IN] });
  await admin.disconnect();
  expect(offsets!.partitions.map((x) => [x.partition, x.offset]).sort()).toEqual([
    [0, '10'],
    [1, '11'],
    [2, '12'],
    [3, '13'],
  ]);
});

it('refuses offsets sent with a generation the group has left behind, as a fencing (ILLEGAL_GENERATION)', async () => {
  const member = members[0] ?? (await joinedMember('a'));
  const stale = groupOf(member);
  await joinedMember('b');
  await until(() => member.generationId > stale.generationId!);

  const p = producerOf(`cg-plat-stale-${RUN}`);
  await p.connect();
  const txn = await p.transaction();
  await txn.send([{ topic: OUT, messages: [{ value: 'stale', partition: 0 }] }]);
  const refused = await txn
    .sendOffsets([{ topic: IN, partition: 0, offset: '5' }], stale)
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ProducerFencedError);
  expect((refused as ProducerFencedError).type).toBe('ILLEGAL_GENERATION');
  // The group refused the member, not the producer: its transaction aborts, then it is done.
  await txn.abort();
  await expect(p.transaction()).rejects.toBeInstanceOf(ProducerFencedError);

  const marker = producerOf(`cg-plat-stale-end-${RUN}`);
  await marker.connect();
  await commitMarker(marker, 'stale-end');
  expect((await committedValues(OUT, 'stale-end')).map((r) => r.value)).not.toContain('stale');
});

it('fails a record too large for its topic with RecordTooLargeError naming the topic, and goes on after the abort', async () => {
  const p = producerOf(`cg-plat-large-${RUN}`);
  await p.connect();
  const txn = await p.transaction();
  const big = { value: Buffer.alloc(8 * 1024, 1), partition: 0 };
  const refused = await txn
    .send([
      { topic: OUT, messages: [{ value: 'fits', partition: 0 }] },
      { topic: SMALL, messages: [big] },
    ])
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(RecordTooLargeError);
  expect((refused as RecordTooLargeError).topic).toBe(SMALL);
  expect((refused as RecordTooLargeError).messages).toEqual([big]);
  await txn.abort();
  await commitMarker(p, 'large-end');
});
