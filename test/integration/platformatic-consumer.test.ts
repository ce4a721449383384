/**
 * The consumer side of the @platformatic/kafka transport (src/kafka/platformatic/) on the real
 * broker: read_committed over many aborted transactions of one producer (the probe of gap 10,
 * bench/probes/platformatic/README.md, where the library's own stream delivered aborted
 * records), seek, pause, a group of two members, the changelog reader, and stop.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Consumer as PlatformaticConsumer } from '@platformatic/kafka';
import { platformaticGroupConsumer } from '../../src/kafka/platformatic/groupConsumer';
import { platformaticPartitionReader } from '../../src/kafka/platformatic/partitionReader';
import type { GroupConsumerOptions, GroupHandlers } from '../../src/kafka/transport/consumer';
import type { GroupMetadata } from '../../src/kafka/transport/producer';
import type { FetchedBatch } from '../../src/kafka/transport/records';
import { brokers, kafka } from './pipeline';

type Admin = ReturnType<typeof kafka.admin>;
type Producer = ReturnType<typeof kafka.producer>;

jest.setTimeout(120_000);

const base = { clientId: 'cg-platformatic-consumer-test', bootstrapBrokers: brokers };
const PAD = 'x'.repeat(80);
const TXNS = 21;
const PER_TXN = 5;

const uniq = (name: string) => `cg-plat-${name}-${randomUUID().slice(0, 8)}`;

async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

async function createTopic(topic: string, numPartitions: number): Promise<void> {
  await withAdmin((admin) =>
    admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true }),
  );
}

/**
 * TXNS transactions of PER_TXN records to partition 0, all of ONE transactional producer (one
 * producer id), the odd ones aborted and the last committed: `t<i>-<C|A>-<j>-<pad>`.
 */
async function writeTransactions(topic: string): Promise<void> {
  await withTransactionalProducer(async (producer) => {
    for (let i = 0; i < TXNS; i++) {
      const abort = i % 2 === 1;
      const txn = await producer.transaction();
      await txn.send({
        topic,
        messages: Array.from({ length: PER_TXN }, (_, j) => ({
          partition: 0,
          value: `t${i}-${abort ? 'A' : 'C'}-${j}-${PAD}`,
        })),
      });
      if (abort) await txn.abort();
      else await txn.commit();
    }
  });
}

/**
 * The probe of gap 13 on partition 0, all of one transactional producer (one producer id): an
 * aborted transaction, DATALESS_COMMITTED committed ones, then a transaction whose only send the
 * broker refuses (a record above the topic's max.message.bytes), aborted: its abort marker has no
 * data of its own and the broker lists no aborted transaction for it. Returns the committed
 * values and the log's end.
 */
const DATALESS_COMMITTED = 4;
async function writeDatalessAbort(topic: string): Promise<{ committed: string[]; end: bigint }> {
  await withAdmin((admin) =>
    admin.createTopics({
      topics: [
        { topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '2000' }] },
      ],
      waitForLeaders: true,
    }),
  );
  const committed: string[] = [];
  await withTransactionalProducer(async (producer) => {
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ partition: 0, value: 'a-A-0' }] });
    await aborted.abort();
    for (let i = 0; i < DATALESS_COMMITTED; i++) {
      const txn = await producer.transaction();
      const values = [`c${i}-C-0`, `c${i}-C-1`];
      await txn.send({ topic, messages: values.map((value) => ({ partition: 0, value })) });
      await txn.commit();
      committed.push(...values);
    }
    const refused = await producer.transaction();
    await expect(
      refused.send({ topic, messages: [{ partition: 0, value: 'x'.repeat(4000) }] }),
    ).rejects.toThrow(/larger than the max message size/);
    await refused.abort();
  });
  const [end] = await withAdmin((admin) => admin.fetchTopicOffsets(topic));
  return { committed, end: BigInt(end!.high) };
}

/** One transactional producer of kafkajs (one producer id) for `work`. */
async function withTransactionalProducer<T>(work: (p: Producer) => Promise<T>): Promise<T> {
  const producer = kafka.producer({
    transactionalId: uniq('txn'),
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    return await work(producer);
  } finally {
    await producer.disconnect();
  }
}

async function produce(topic: string, messages: { partition: number; value: string }[]) {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages });
  } finally {
    await producer.disconnect();
  }
}

async function until(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Event =
  | { kind: 'revoked'; partitions: number[] }
  | { kind: 'assigned'; partitions: number[]; group: GroupMetadata }
  | { kind: 'crashed'; error: unknown };

/** Handlers that record everything and resolve each batch whole. */
function recorder() {
  const events: Event[] = [];
  const batches: FetchedBatch[] = [];
  const handlers: GroupHandlers = {
    revoked: (partitions) => events.push({ kind: 'revoked', partitions }),
    assigned: (partitions, group) => events.push({ kind: 'assigned', partitions, group }),
    crashed: (error) => events.push({ kind: 'crashed', error }),
    batch: async (batch, control) => {
      batches.push(batch);
      control.resolveOffset(batch.lastOffset());
    },
  };
  const values = (partition?: number) =>
    batches
      .filter((b) => partition === undefined || b.partition === partition)
      .flatMap((b) => b.messages.map((m) => m.value!.toString()));
  const assignments = () =>
    events.filter((e): e is Extract<Event, { kind: 'assigned' }> => e.kind === 'assigned');
  return { events, batches, handlers, values, assignments };
}

function options(topic: string, o: Partial<GroupConsumerOptions> = {}): GroupConsumerOptions {
  return {
    groupId: uniq('group'),
    topic,
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 500,
    rebalanceTimeoutMs: 10_000,
    maxBytesPerPartition: 1024 * 1024,
    maxBytes: 10 * 1024 * 1024,
    maxWaitMs: 200,
    partitionsConcurrently: 4,
    ...o,
  };
}

/** The fetch offsets each partition was asked at, spied on the library's public fetch. */
function fetchOffsets(client: PlatformaticConsumer): Map<number, bigint[]> {
  const asked = new Map<number, bigint[]>();
  const fetch = client.fetch.bind(client) as (o: unknown) => Promise<unknown>;
  jest.spyOn(client, 'fetch').mockImplementation(((o: {
    topics: { partitions: { partition: number; fetchOffset: bigint }[] }[];
  }) => {
    for (const t of o.topics)
      for (const p of t.partitions)
        asked.set(p.partition, [...(asked.get(p.partition) ?? []), p.fetchOffset]);
    return fetch(o);
  }) as never);
  return asked;
}

async function groupMembers(groupId: string): Promise<number> {
  const { groups } = await withAdmin((admin) => admin.describeGroups([groupId]));
  return groups[0]?.members.length ?? 0;
}

describe('the @platformatic/kafka consumer side on the real broker', () => {
  const running: { stop(): Promise<void> }[] = [];
  const started = <T extends { stop(): Promise<void> }>(c: T) => {
    running.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop()));
  });

  const committedValues = Array.from({ length: TXNS }, (_, i) => i)
    .filter((i) => i % 2 === 0)
    .flatMap((i) => Array.from({ length: PER_TXN }, (_, j) => `t${i}-C-${j}-${PAD}`));
  // Each transaction takes PER_TXN offsets and one for its marker.
  const logEnd = BigInt(TXNS * (PER_TXN + 1));

  describe('many committed and aborted transactions of one producer on one partition', () => {
    let topic: string;
    beforeAll(async () => {
      topic = uniq('gap10');
      await createTopic(topic, 1);
      await writeTransactions(topic);
    });

    it.each([
      ['small', 100],
      ['large', 10 * 1024 * 1024],
    ])(
      'delivers no aborted record and every committed one in order at %s fetch sizes, its position past the markers',
      async (_size, bytes) => {
        const r = recorder();
        const consumer = started(
          platformaticGroupConsumer(
            base,
            options(topic, { maxBytes: bytes, maxBytesPerPartition: bytes }),
          ),
        );
        const asked = fetchOffsets(consumer.client);
        await consumer.start(r.handlers);
        await until(() => r.values().length >= committedValues.length);
        // Whatever comes later would be aborted records or duplicates: give it the time.
        await until(() => (asked.get(0) ?? []).includes(logEnd));
        await sleep(500);
        expect(r.values().filter((v) => v.includes('-A-'))).toEqual([]);
        expect(r.values()).toEqual(committedValues);
        // The last fetch starts at the log's end, past the last commit marker.
        expect(asked.get(0)!.at(-1)).toBe(logEnd);
        expect(r.events.filter((e) => e.kind === 'crashed')).toEqual([]);
      },
    );

    it('reads again from the offset a seek gives, an aborted range skipped', async () => {
      const r = recorder();
      const consumer = started(platformaticGroupConsumer(base, options(topic)));
      await consumer.start(r.handlers);
      await until(() => r.values().length >= committedValues.length);
      const before = r.batches.length;
      consumer.seek(0, '2');
      await until(() => r.batches.length > before);
      expect(r.batches[before]!.firstOffset()).toBe('2');
      await until(() => r.values().length >= 2 * committedValues.length - 2);
      const after = r.batches.length;
      // Offsets 6-10 are transaction 1's, aborted: the next committed record is 12.
      consumer.seek(0, '7');
      await until(() => r.batches.length > after);
      expect(r.batches[after]!.firstOffset()).toBe('12');
    });
  });

  describe('committed transactions between an aborted one and a data-less abort marker of the same producer (gap 13)', () => {
    let topic: string;
    let written: { committed: string[]; end: bigint };
    beforeAll(async () => {
      topic = uniq('gap13');
      written = await writeDatalessAbort(topic);
      // An aborted record, 4 committed transactions of 2 and their markers, the data-less marker.
      expect(written.end).toBe(2n + 3n * BigInt(DATALESS_COMMITTED) + 1n);
    });

    it("the changelog reader delivers every committed record, which the library's own filter cuts", async () => {
      const reader = started(
        platformaticPartitionReader(base, {
          groupId: uniq('reader'),
          topic,
          maxBytesPerPartition: 1024 * 1024,
          maxBytes: 10 * 1024 * 1024,
          maxWaitMs: 100,
          partitionsConcurrently: 1,
        }),
      );
      const values: string[] = [];
      await reader.start(async (batch) => {
        values.push(...batch.messages.map((m) => m.value!.toString()));
      });
      // Without the second fetch nothing at all arrives: wait a bounded time, then compare.
      await until(() => values.length >= written.committed.length, 10_000).catch(() => undefined);
      await sleep(300);
      expect(values).toEqual(written.committed);
    });

    it('the group consumer delivers every committed record once, its position at the log end', async () => {
      const r = recorder();
      const consumer = started(platformaticGroupConsumer(base, options(topic)));
      const asked = fetchOffsets(consumer.client);
      await consumer.start(r.handlers);
      await until(() => (asked.get(0) ?? []).includes(written.end));
      await sleep(300);
      expect(r.values()).toEqual(written.committed);
      expect(r.events.filter((e) => e.kind === 'crashed')).toEqual([]);
    });
  });

  it('pauses one partition while another goes on, and resumes it', async () => {
    const topic = uniq('pause');
    await createTopic(topic, 2);
    const r = recorder();
    const consumer = started(platformaticGroupConsumer(base, options(topic)));
    await consumer.start(r.handlers);
    consumer.pause([0]);
    await produce(
      topic,
      [0, 1].flatMap((partition) =>
        Array.from({ length: 5 }, (_, i) => ({ partition, value: `p${partition}-${i}` })),
      ),
    );
    await until(() => r.values(1).length === 5);
    await sleep(1000);
    expect(r.values(0)).toEqual([]);
    consumer.resume([0]);
    await until(() => r.values(0).length === 5);
    expect(r.values(0)).toEqual(Array.from({ length: 5 }, (_, i) => `p0-${i}`));
  });

  it('splits the partitions between two members: revoked before assigned, the generation grows, the member id is set, and stop leaves the group', async () => {
    const topic = uniq('group');
    await createTopic(topic, 4);
    const o = options(topic);
    const a = recorder();
    const b = recorder();
    const first = started(platformaticGroupConsumer(base, o));
    await first.start(a.handlers);
    expect(a.assignments()[0]!.partitions).toEqual([0, 1, 2, 3]);
    const g1 = a.assignments()[0]!.group;
    expect(g1.groupId).toBe(o.groupId);
    expect(g1.memberId).toEqual(expect.any(String));
    expect(g1.memberId).not.toBe('');
    expect(g1.generationId).toBeGreaterThan(0);

    const second = started(platformaticGroupConsumer(base, o));
    await second.start(b.handlers);
    await until(() => a.assignments().length >= 2);
    const aNow = a.assignments().at(-1)!;
    const bNow = b.assignments().at(-1)!;
    expect([...aNow.partitions, ...bNow.partitions].sort()).toEqual([0, 1, 2, 3]);
    expect(aNow.partitions.length).toBe(2);
    expect(aNow.group.generationId!).toBeGreaterThan(g1.generationId!);
    expect(bNow.group.generationId).toBe(aNow.group.generationId);
    expect(bNow.group.memberId).not.toBe(aNow.group.memberId);
    // Each join reports its revocations first (none at the first), then the whole assignment.
    expect(a.events.map((e) => e.kind).slice(0, 4)).toEqual([
      'revoked',
      'assigned',
      'revoked',
      'assigned',
    ]);
    expect(a.events[0]).toEqual({ kind: 'revoked', partitions: [] });
    expect(a.events[2]).toEqual({ kind: 'revoked', partitions: bNow.partitions });

    // Both read their own partitions.
    await produce(
      topic,
      [0, 1, 2, 3].map((partition) => ({ partition, value: `v${partition}` })),
    );
    await until(() => a.values().length + b.values().length === 4);
    expect(a.batches.map((x) => x.partition).sort()).toEqual(aNow.partitions);

    // The second leaves: the first gets everything back in a newer generation.
    await second.stop();
    await until(() => a.assignments().at(-1)!.partitions.length === 4);
    expect(a.assignments().at(-1)!.group.generationId!).toBeGreaterThan(aNow.group.generationId!);
    await first.stop();
    expect(await groupMembers(o.groupId)).toBe(0);
  });

  it('a member evicted while stalled and let back in by the library is told that all it held was revoked, even the partitions it gets back', async () => {
    // The library rejoins on its own after UNKNOWN_MEMBER_ID; before, the join's diff kept the
    // partitions the member got back, and the processor kept their state, stale by what the
    // member that held them meanwhile committed (docs/decisions.md 241).
    const topic = uniq('rejoin');
    await createTopic(topic, 2);
    const o = options(topic, { sessionTimeoutMs: 6_000 });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'rejoin', 'member-child.ts')],
      {
        env: { ...process.env, CG_TEST_GROUP_OPTIONS: JSON.stringify(o) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const told: Event[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => told.push(JSON.parse(l) as Event));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const assignedToChild = () =>
        told.filter((e): e is Extract<Event, { kind: 'assigned' }> => e.kind === 'assigned');
      await until(() => assignedToChild().length === 1, 60_000);
      const before = assignedToChild()[0]!;
      expect(before.partitions).toEqual([0, 1]);

      // Stalled past its session timeout: the other member takes both partitions, then leaves.
      child.kill('SIGSTOP');
      const other = recorder();
      const second = started(platformaticGroupConsumer(base, o));
      await second.start(other.handlers);
      await until(() => other.assignments().at(-1)?.partitions.length === 2, 60_000);
      await second.stop();

      // Back: the library rejoins under a new member id and gets both partitions again.
      const toldBefore = told.length;
      child.kill('SIGCONT');
      await until(() => assignedToChild().length === 2, 60_000);
      const after = assignedToChild()[1]!;
      expect(after.partitions).toEqual([0, 1]);
      expect(after.group.memberId).not.toBe(before.group.memberId);
      // Not kept: everything it held was revoked before the new assignment (so the processor
      // restores them from the changelog as new partitions).
      expect(told.slice(toldBefore).filter((e) => e.kind !== 'crashed')).toEqual([
        { kind: 'revoked', partitions: [0, 1] },
        after,
      ]);
    } finally {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      child.kill('SIGKILL');
    }
  });

  it("assigns a partition only once an open transaction's offsets of the group are committed, and starts there", async () => {
    const topic = uniq('stable');
    await createTopic(topic, 1);
    await produce(
      topic,
      Array.from({ length: 6 }, (_, i) => ({ partition: 0, value: `r${i}` })),
    );
    const o = options(topic);
    await withTransactionalProducer(async (producer) => {
      const txn = await producer.transaction();
      await txn.sendOffsets({
        consumerGroupId: o.groupId,
        topics: [{ topic, partitions: [{ partition: 0, offset: '3' }] }],
      });
      const r = recorder();
      const consumer = started(platformaticGroupConsumer(base, o));
      const starting = consumer.start(r.handlers);
      await sleep(3000);
      // The coordinator answers UNSTABLE_OFFSET_COMMIT meanwhile: nothing is assigned yet.
      expect(r.assignments()).toEqual([]);
      await txn.commit();
      await starting;
      expect(r.assignments().map((a) => a.partitions)).toEqual([[0]]);
      await until(() => r.values().length === 3);
      expect(r.batches[0]!.firstOffset()).toBe('3');
      expect(r.values()).toEqual(['r3', 'r4', 'r5']);
    });
  });

  it('stays in the group while a handler holds a batch longer than the session timeout: the library heartbeats on its own timer', async () => {
    const topic = uniq('hold');
    await createTopic(topic, 1);
    const r = recorder();
    const held: { staleAfter: boolean; heartbeat: string }[] = [];
    const sessionTimeoutMs = 6_000; // the broker's default group.min.session.timeout.ms
    const consumer = started(
      platformaticGroupConsumer(
        base,
        options(topic, { sessionTimeoutMs, heartbeatIntervalMs: 1000 }),
      ),
    );
    await consumer.start({
      ...r.handlers,
      batch: async (batch, control) => {
        await sleep(sessionTimeoutMs + 2_000);
        const heartbeat = await control.heartbeat().then(
          () => 'ok',
          (e: Error) => e.name,
        );
        held.push({ staleAfter: control.isStale(), heartbeat });
        control.resolveOffset(batch.lastOffset());
      },
    });
    await produce(topic, [{ partition: 0, value: 'held' }]);
    await until(() => held.length === 1, 30_000);
    expect(held).toEqual([{ staleAfter: false, heartbeat: 'ok' }]);
    expect(r.events.map((e) => e.kind)).toEqual(['revoked', 'assigned']);
  });

  it('reads a topic to its end through the reader, committed records only, and stops each partition once paused', async () => {
    const topic = uniq('reader');
    await createTopic(topic, 2);
    await writeTransactions(topic);
    await produce(
      topic,
      Array.from({ length: 7 }, (_, i) => ({ partition: 1, value: `plain-${i}` })),
    );
    const reader = started(
      platformaticPartitionReader(base, {
        groupId: uniq('reader'),
        topic,
        maxBytesPerPartition: 1500,
        maxBytes: 4000,
        maxWaitMs: 100,
        partitionsConcurrently: 2,
      }),
    );
    const values = new Map<number, string[]>([
      [0, []],
      [1, []],
    ]);
    const afterPause: FetchedBatch[] = [];
    const paused = new Set<number>();
    const expected = new Map([
      [0, committedValues.length],
      [1, 7],
    ]);
    await reader.start(async (batch) => {
      if (paused.has(batch.partition)) afterPause.push(batch);
      values.get(batch.partition)!.push(...batch.messages.map((m) => m.value!.toString()));
      if (values.get(batch.partition)!.length >= expected.get(batch.partition)!) {
        paused.add(batch.partition);
        reader.pause([batch.partition]);
      }
    });
    await until(() => paused.size === 2);
    // More records after the pause are not read.
    await produce(topic, [
      { partition: 0, value: 'late-0' },
      { partition: 1, value: 'late-1' },
    ]);
    await sleep(1500);
    expect(afterPause).toEqual([]);
    expect(values.get(0)).toEqual(committedValues);
    expect(values.get(1)).toEqual(Array.from({ length: 7 }, (_, i) => `plain-${i}`));
  });
});
