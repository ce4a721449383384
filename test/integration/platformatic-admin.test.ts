/**
 * The transport's admin on @platformatic/kafka (src/kafka/platformatic/admin.ts) answers as the
 * one on kafkajs (src/kafka/kafkajs/admin.ts), field for field, on the same topics and group of
 * the real broker: topics it created with two sets of configs, a committed offset on some
 * partitions only, records deleted from the start of one partition, and a transaction left open
 * on another (so that the high watermark and the last stable offset differ there: both report the
 * last stable offset, kafkajs' admin reading offsets read_committed).
 */
import { randomUUID } from 'node:crypto';
import { DEFAULTS } from '../../src/config/config';
import { kafkajsAdmin } from '../../src/kafka/kafkajs';
import { baseOptions } from '../../src/kafka/platformatic/connection';
import { platformaticAdmin } from '../../src/kafka/platformatic/admin';
import type { TransportAdmin } from '../../src/kafka/transport';
import { brokers, kafka } from './pipeline';

const byPartition = <T extends { partition: number }>(xs: T[]) =>
  [...xs].sort((a, b) => a.partition - b.partition);

describe('the admin on @platformatic/kafka against the one on kafkajs', () => {
  const id = randomUUID().slice(0, 8);
  const plain = [`plat-admin-a-${id}`, `plat-admin-b-${id}`];
  const compacted = `plat-admin-c-${id}`;
  const group = `plat-admin-g-${id}`;
  let plat: TransportAdmin;
  let ref: TransportAdmin;

  beforeAll(async () => {
    plat = platformaticAdmin(baseOptions({ ...DEFAULTS, brokers, clientId: 'cg-it-plat' }));
    ref = kafkajsAdmin(kafka.admin());
    await Promise.all([plat.connect(), ref.connect()]);
  });
  afterAll(async () => {
    await Promise.all([plat.disconnect(), ref.disconnect()]);
  });

  it('creates topics with each one its configs, in one call per set of configs, and again without failing', async () => {
    const retention = [{ name: 'retention.ms', value: '3600000' }];
    const compact = [{ name: 'cleanup.policy', value: 'compact' }];
    const topics = [
      { topic: plain[0]!, numPartitions: 3, replicationFactor: 1, configEntries: retention },
      { topic: compacted, numPartitions: 2, replicationFactor: 1, configEntries: compact },
      { topic: plain[1]!, numPartitions: 3, replicationFactor: 1, configEntries: retention },
    ];
    await plat.createTopics(topics);
    // Created meanwhile by another instance: no failure, as with kafkajs.
    await plat.createTopics(topics);
    const names = ['cleanup.policy', 'retention.ms', 'max.message.bytes', 'min.insync.replicas'];
    const all = [...plain, compacted];
    // A new topic's metadata can lag a moment: both read once every partition has a leader.
    const led = async (a: TransportAdmin) => {
      for (let i = 0; i < 50; i++) {
        const l = await a.topicLayouts(all).catch(() => []);
        if (l.length === 3 && l.every((t) => t.partitions.every((p) => p.leader >= 0))) return l;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error('no leaders');
    };
    const project = (ls: Awaited<ReturnType<TransportAdmin['topicLayouts']>>) =>
      ls
        .map((t) => ({
          name: t.name,
          partitions: [...t.partitions]
            .sort((a, b) => a.partitionId - b.partitionId)
            .map(({ partitionId, leader, replicas }) => ({ partitionId, leader, replicas })),
        }))
        .sort((a, b) => a.name.localeCompare(b.name));
    const [platLayouts, refLayouts] = [await led(plat), await led(ref)];
    expect(project(platLayouts)).toEqual(project(refLayouts));
    expect(project(platLayouts).map((t) => t.partitions.length)).toEqual([3, 3, 2]);
    const [platConfigs, refConfigs] = await Promise.all([
      plat.topicConfigs(all, names),
      ref.topicConfigs(all, names),
    ]);
    expect(platConfigs).toEqual(refConfigs);
    expect(platConfigs.get(plain[1]!)?.get('retention.ms')).toBe('3600000');
    expect(platConfigs.get(plain[1]!)?.get('cleanup.policy')).toBe('delete');
    expect(platConfigs.get(compacted)?.get('cleanup.policy')).toBe('compact');
    expect(platConfigs.get(compacted)?.get('retention.ms')).not.toBe('3600000');
  });

  it('lists the same topics (internal ones too) and the same brokers', async () => {
    const before = new Set(await ref.listTopics());
    const listed = await plat.listTopics();
    const after = new Set(await ref.listTopics());
    // Other tests create and delete topics meanwhile: between the two kafkajs lists.
    for (const t of before) if (after.has(t)) expect(listed).toContain(t);
    for (const t of listed) expect(before.has(t) || after.has(t)).toBe(true);
    expect(listed).toEqual(expect.arrayContaining([...plain, compacted, '__consumer_offsets']));
    expect(await plat.brokerCount()).toBe(await ref.brokerCount());
  });

  it('reads the same committed offsets (none: -1) and topic offsets (high: the last stable offset; low after deletion)', async () => {
    const topic = plain[0]!;
    const producer = kafka.producer();
    await producer.connect();
    for (const partition of [0, 1, 2])
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: 5 + partition }, (_, i) => ({
          partition,
          value: `v${i}`,
        })),
      });
    await producer.disconnect();
    const kadmin = kafka.admin();
    await kadmin.connect();
    const txnProducer = kafka.producer({
      transactionalId: `plat-admin-t-${id}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await txnProducer.connect();
    const txn = await txnProducer.transaction();
    try {
      await kadmin.setOffsets({
        groupId: group,
        topic,
        partitions: [
          { partition: 0, offset: '3' },
          { partition: 1, offset: '6' },
        ],
      });
      await kadmin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] });
      // An open transaction on partition 2: above the last stable offset, which both report
      // as `high` (kafkajs' ListOffsets is read_committed), not the high watermark.
      await txn.send({ topic, messages: [{ partition: 2, value: 'open' }] });
      const [platCommitted, refCommitted] = await Promise.all([
        plat.committedOffsets(group, topic),
        ref.committedOffsets(group, topic),
      ]);
      const committed = (xs: { partition: number; offset: string }[]) =>
        byPartition(xs.map(({ partition, offset }) => ({ partition, offset })));
      expect(committed(platCommitted)).toEqual(committed(refCommitted));
      expect(committed(platCommitted)).toEqual([
        { partition: 0, offset: '3' },
        { partition: 1, offset: '6' },
        { partition: 2, offset: '-1' },
      ]);
      const [platOffsets, refOffsets] = await Promise.all([
        plat.topicOffsets(topic),
        ref.topicOffsets(topic),
      ]);
      const offsets = (xs: { partition: number; low: string; high: string }[]) =>
        byPartition(xs.map(({ partition, low, high }) => ({ partition, low, high })));
      expect(offsets(platOffsets)).toEqual(offsets(refOffsets));
      expect(offsets(platOffsets)).toEqual([
        { partition: 0, low: '2', high: '5' },
        { partition: 1, low: '0', high: '6' },
        { partition: 2, low: '0', high: '7' },
      ]);
      // A group that never committed: every partition -1 on both.
      const none = `plat-admin-none-${id}`;
      expect(committed(await plat.committedOffsets(none, topic))).toEqual(
        committed(await ref.committedOffsets(none, topic)),
      );
    } finally {
      await txn.abort().catch(() => undefined);
      await txnProducer.disconnect();
      await kadmin.deleteTopics({ topics: [...plain, compacted] }).catch(() => undefined);
      await kadmin.disconnect();
    }
  });
});
