/**
 * The transport's admin (src/kafka/transport/admin.ts) on @platformatic/kafka's Admin, answering
 * as the kafkajs one does (src/kafka/kafkajs/admin.ts; test/integration/platformatic-admin.test.ts
 * compares the two field for field on the same topics and group):
 * - topics and brokers from Metadata, forced fresh (the library caches it);
 * - `createTopics` in one call per set of configs (the library applies a call's `configs` to
 *   every topic of it); a topic created meanwhile by another instance is no failure, as in kafkajs;
 * - committed offsets with `requireStable` (a pending transaction's offsets are waited for, not
 *   read as they were before it), every partition of the topic listed, '-1' where none is;
 * - topic offsets read_committed, as kafkajs' `fetchTopicOffsets` sends them (its admin sets no
 *   isolation level, and its ListOffsets v2+ defaults to READ_COMMITTED): `high` is the last
 *   stable offset, below the records of a transaction still open (the integration test holds
 *   it on a partition with one open).
 */
import {
  Admin,
  ConfigResourceTypes,
  FetchIsolationLevels,
  ListOffsetTimestamps,
  type BaseOptions,
} from '@platformatic/kafka';
import type { NewTopic, PartitionOffsets, TransportAdmin } from '../transport/admin';
import { apiIdOf, errorTree } from './errorTypes';

export function platformaticAdmin(base: BaseOptions): TransportAdmin {
  const admin = new Admin(base);
  const layouts = async (topics: string[]) => {
    const { topics: found } = await admin.metadata({ topics, forceUpdate: true });
    return topics.flatMap((name) => {
      const t = found.get(name);
      if (t === undefined) return [];
      return [
        {
          name,
          partitions: t.partitions.map((p, partitionId) => ({
            partitionId,
            leader: p.leader,
            replicas: p.replicas,
          })),
        },
      ];
    });
  };
  const partitionsOf = async (topic: string) =>
    ((await layouts([topic]))[0]?.partitions ?? []).map((p) => p.partitionId);
  const offsetsAt = async (topic: string, partitions: number[], timestamp: bigint) => {
    const [listed] = await admin.listOffsets({
      topics: [
        { name: topic, partitions: partitions.map((p) => ({ partitionIndex: p, timestamp })) },
      ],
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    });
    return new Map((listed?.partitions ?? []).map((p) => [p.partitionIndex, String(p.offset)]));
  };
  return {
    // The library connects on the first request; closing ends its connections.
    connect: async () => undefined,
    disconnect: () => admin.close(),
    // kafkajs lists the internal topics too (__consumer_offsets, __transaction_state).
    listTopics: () => admin.listTopics({ includeInternals: true }),
    brokerCount: async () => (await admin.metadata({ topics: [], forceUpdate: true })).brokers.size,
    createTopics: async (topics) => {
      for (const group of byConfigs(topics)) {
        await admin
          .createTopics({
            topics: group.map((t) => ({
              topic: t.topic,
              partitions: t.numPartitions,
              replicas: t.replicationFactor,
            })),
            configs: group[0]?.configEntries ?? [],
          })
          .catch((e: unknown) => {
            if (!onlyAlreadyExists(e)) throw e;
          });
      }
    },
    topicLayouts: layouts,
    topicConfigs: async (topics, names) => {
      const described = await admin.describeConfigs({
        resources: topics.map((resourceName) => ({
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName,
          configurationKeys: names,
        })),
      });
      return new Map(
        described.map((r) => [
          r.resourceName,
          new Map(
            r.configs.flatMap((c): [string, string][] =>
              typeof c.value === 'string' ? [[c.name, c.value]] : [],
            ),
          ),
        ]),
      );
    },
    committedOffsets: async (groupId, topic) => {
      const committed = await stableCommittedOffsets(
        admin,
        groupId,
        topic,
        await partitionsOf(topic),
      );
      return [...committed].map(([partition, offset]) => ({ partition, offset: String(offset) }));
    },
    topicOffsets: async (topic): Promise<PartitionOffsets[]> => {
      const partitions = await partitionsOf(topic);
      const low = await offsetsAt(topic, partitions, ListOffsetTimestamps.EARLIEST);
      const high = await offsetsAt(topic, partitions, ListOffsetTimestamps.LATEST);
      return partitions.map((partition) => ({
        partition,
        low: low.get(partition) ?? '0',
        high: high.get(partition) ?? '0',
      }));
    },
  };
}

/**
 * The group's committed offset of each of `partitions` (-1: none), read with requireStable:
 * while a transaction holding offsets of the group is open, the coordinator answers
 * UNSTABLE_OFFSET_COMMIT rather than an offset that is about to move (a zombie's transaction
 * resolves first; design-notes.md §7, step 3).
 * The library consumer's own read does not ask for it (gap 11); both the group consumer and
 * the admin's `committedOffsets` read with this.
 */
export async function stableCommittedOffsets(
  admin: Admin,
  groupId: string,
  topic: string,
  partitions: number[],
): Promise<Map<number, bigint>> {
  const groups = await admin.listConsumerGroupOffsets({
    groups: [{ groupId, topics: [{ name: topic, partitionIndexes: partitions }] }],
    requireStable: true,
  });
  const out = new Map<number, bigint>();
  for (const g of groups)
    for (const t of g.topics)
      if (t.name === topic)
        for (const p of t.partitions) out.set(p.partitionIndex, p.committedOffset);
  return out;
}

/** The topics of one createTopics call each: those with the same configs together, in order. */
export function byConfigs(topics: readonly NewTopic[]): NewTopic[][] {
  const groups = new Map<string, NewTopic[]>();
  for (const t of topics) {
    const key = JSON.stringify(t.configEntries ?? []);
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  return [...groups.values()];
}

/** Every topic of the call existed already: another instance created them first. */
function onlyAlreadyExists(e: unknown): boolean {
  const ids = errorTree(e).flatMap((x) => apiIdOf(x) ?? []);
  return ids.length > 0 && ids.every((id) => id === 'TOPIC_ALREADY_EXISTS');
}
