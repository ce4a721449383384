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
      const partitionIndexes = await partitionsOf(topic);
      const [group] = await admin.listConsumerGroupOffsets({
        groups: [{ groupId, topics: [{ name: topic, partitionIndexes }] }],
        requireStable: true,
      });
      const found = group?.topics.find((t) => t.name === topic)?.partitions ?? [];
      return found.map((p) => ({ partition: p.partitionIndex, offset: String(p.committedOffset) }));
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

/** The topics of one createTopics call each: those with the same configs together, in order. */
export function byConfigs(topics: readonly NewTopic[]): NewTopic[][] {
  const groups = new Map<string, NewTopic[]>();
  for (const t of topics) {
    const key = JSON.stringify(t.configEntries ?? []);
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  return [...groups.values()];
}

/** The protocol error ids (`apiId`) anywhere in the library's error tree. */
function protocolErrorIds(e: unknown): string[] {
  if (typeof e !== 'object' || e === null) return [];
  const { apiId, errors } = e as { apiId?: unknown; errors?: unknown };
  const nested = Array.isArray(errors) ? errors.flatMap(protocolErrorIds) : [];
  return typeof apiId === 'string' ? [apiId, ...nested] : nested;
}

/** Every topic of the call existed already: another instance created them first. */
function onlyAlreadyExists(e: unknown): boolean {
  const ids = protocolErrorIds(e);
  return ids.length > 0 && ids.every((id) => id === 'TOPIC_ALREADY_EXISTS');
}
