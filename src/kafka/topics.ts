/** The topics of contract §6, created when absent; the changelog is compacted and partitioned like the input. */
import type { TransportAdmin } from './transport';
import { TOPIC_KEYS, type Config } from '../config/config';
import type { Logger } from 'pino';
import { OperationalError, causeMessages } from '../errors';
import { retry } from '../retry';
import {
  createdVerdictTopicWarning,
  missingClientTopics,
  uncreatableTopicsMessage,
} from './missingTopics';

/** What created topics get, and what existing ones need for the guarantee. */
export interface Replication {
  replicationFactor: number;
  /** null: leave the broker's default (topics replicated fewer than 3 times). */
  minInsyncReplicas: number | null;
}

/**
 * Replication for a cluster of `brokers`: RF = min(3, brokers) and min.insync.replicas 2 when
 * RF is 3 or more (one broker may fail without losing an acknowledged write or stopping
 * writes), each unless configured. Pure, so the choice is unit-tested.
 */
export function chooseReplication(
  brokers: number,
  c: Pick<Config, 'replicationFactor' | 'minInsyncReplicas'>,
): Replication {
  const replicationFactor = c.replicationFactor ?? Math.max(1, Math.min(3, brokers));
  const minInsyncReplicas = c.minInsyncReplicas ?? (replicationFactor >= 3 ? 2 : null);
  return { replicationFactor, minInsyncReplicas };
}

/** An existing topic as found: its smallest replica count and its effective min ISR. */
export interface TopicReplication {
  topic: string;
  replicas: number;
  minInsyncReplicas: number;
}

/**
 * Existing topics replicated less than `want` asks for: fewer replicas, or a lower min ISR
 * (with min ISR 1, a write acknowledged by the leader alone is lost if that leader fails). One
 * line per topic, for the start-up warning. Pure.
 */
export function underReplicated(found: readonly TopicReplication[], want: Replication): string[] {
  const out: string[] = [];
  for (const t of found) {
    const problems: string[] = [];
    if (t.replicas < want.replicationFactor)
      problems.push(`replication factor ${t.replicas} < ${want.replicationFactor}`);
    if (want.minInsyncReplicas !== null && t.minInsyncReplicas < want.minInsyncReplicas)
      problems.push(`min.insync.replicas ${t.minInsyncReplicas} < ${want.minInsyncReplicas}`);
    if (problems.length > 0) out.push(`${t.topic} (${problems.join(', ')})`);
  }
  return out;
}

async function describeReplication(
  admin: TransportAdmin,
  topics: string[],
): Promise<TopicReplication[]> {
  if (topics.length === 0) return [];
  const layouts = await admin.topicLayouts(topics);
  const configs = await admin.topicConfigs(topics, ['min.insync.replicas']);
  return layouts.map((t) => ({
    topic: t.name,
    replicas: Math.min(...t.partitions.map((p) => p.replicas.length)),
    minInsyncReplicas: Number(configs.get(t.name)?.get('min.insync.replicas') ?? 1),
  }));
}

/**
 * Partitions of a topic once every one has a leader. A new topic's metadata can briefly say
 * UNKNOWN_TOPIC_OR_PARTITION (Kafka 4), which kafkajs' own `waitForLeaders` does not retry.
 */
export async function partitionCount(
  admin: TransportAdmin,
  topic: string,
  timeoutMs = 30_000,
): Promise<number> {
  return retry(
    async () => {
      const [layout] = await admin.topicLayouts([topic]);
      const partitions = layout?.partitions ?? [];
      if (partitions.length > 0 && partitions.every((p) => p.leader >= 0)) return partitions.length;
      throw new Error(`topic ${topic} has no leader for every partition after ${timeoutMs} ms`);
    },
    {
      deadlineMs: timeoutMs,
      backoff: { initialMs: 200, growth: 'constant' },
      // Metadata of a topic being created is expected to fail for a moment: any failure waits.
      retriable: () => true,
    },
  );
}

export interface EnsuredTopics {
  inputPartitions: number;
  /** Partitions of every topic the processor writes (outputs, DLQ, changelog). */
  partitions: Map<string, number>;
  /** What created topics got (and existing ones were checked against). */
  replication: Replication;
  /** Existing topics replicated less than that: `underReplicated`'s lines (warned at start-up). */
  underReplicated: string[];
  /**
   * `max.message.bytes` of every topic the processor writes, as the broker applies it (the
   * topic's own or the broker's default): nothing larger is ever sent (recordLimits.ts).
   */
  maxMessageBytes: Map<string, number>;
}

/** The effective `max.message.bytes` of `topics` (a topic the broker does not say: left out). */
export async function maxMessageBytes(
  admin: TransportAdmin,
  topics: string[],
): Promise<Map<string, number>> {
  const configs = await admin.topicConfigs(topics, ['max.message.bytes']);
  const out = new Map<string, number>();
  for (const [topic, config] of configs) {
    const value = Number(config.get('max.message.bytes'));
    if (Number.isSafeInteger(value) && value > 0) out.set(topic, value);
  }
  return out;
}

export async function ensureTopics(admin: TransportAdmin, c: Config): Promise<EnsuredTopics> {
  const all = TOPIC_KEYS.map((key) => c[key]);
  const existing = new Set(await admin.listTopics());
  const brokers = await admin.brokerCount();
  const replication = chooseReplication(brokers, c);
  const { replicationFactor } = replication;
  const minIsr =
    replication.minInsyncReplicas === null
      ? []
      : [{ name: 'min.insync.replicas', value: String(replication.minInsyncReplicas) }];
  const plain = all.filter((t) => t !== c.changelogTopic && !existing.has(t));
  if (plain.length > 0) {
    await admin.createTopics(
      plain.map((topic) => ({
        topic,
        numPartitions: c.partitions,
        replicationFactor,
        configEntries: minIsr,
      })),
    );
  }
  // Each topic's partitions once (waiting for the leaders of those just created).
  const partitions = new Map<string, number>();
  const count = async (topic: string): Promise<number> => {
    const n = partitions.get(topic) ?? (await partitionCount(admin, topic));
    partitions.set(topic, n);
    return n;
  };
  for (const t of plain) await count(t);
  const inputPartitions = await count(c.inputTopic);
  if (!existing.has(c.changelogTopic)) {
    await admin.createTopics([
      {
        topic: c.changelogTopic,
        numPartitions: inputPartitions,
        replicationFactor,
        configEntries: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'min.compaction.lag.ms', value: '0' },
          ...minIsr,
        ],
      },
    ]);
  }
  const changelogPartitions = await count(c.changelogTopic);
  if (changelogPartitions !== inputPartitions) {
    throw new Error(
      `${c.changelogTopic} has ${changelogPartitions} partitions but ${c.inputTopic} has ${inputPartitions}: state is restored per input partition, so they must match`,
    );
  }
  const found = await describeReplication(
    admin,
    all.filter((t) => existing.has(t)),
  );
  for (const t of all) await count(t);
  return {
    inputPartitions,
    partitions,
    replication,
    underReplicated: underReplicated(found, replication),
    maxMessageBytes: await maxMessageBytes(
      admin,
      all.filter((t) => t !== c.inputTopic),
    ),
  };
}

/**
 * What a client (GuardClient) needs before it sends: the input's partition count, and the
 * verdict topic it subscribes to. When either does not exist yet (a fresh development cluster,
 * or a verdict topic of its own) every absent topic is created as the processor would;
 * otherwise nothing is created or described beyond the input, which is all an orchestrator may
 * see on a cluster with ACLs (src/kafka/acls.ts): it sees neither the changelog nor the audit
 * topic, so creating "absent" topics would fail its connect.
 */
export async function clientInputPartitions(
  admin: TransportAdmin,
  c: Config,
  log?: Pick<Logger, 'warn'>,
): Promise<number> {
  const existing = new Set(await admin.listTopics());
  const missing = missingClientTopics(c, existing);
  if (missing.length === 0) return partitionCount(admin, c.inputTopic);
  let ensured: EnsuredTopics;
  try {
    ensured = await ensureTopics(admin, c);
  } catch (e) {
    const message = uncreatableTopicsMessage(missing, causeMessages(e), c.partitions);
    throw new OperationalError('TOPIC_MISSING', message, { cause: e });
  }
  if (existing.has(c.inputTopic))
    log?.warn({ topic: c.verdictTopic }, createdVerdictTopicWarning(c));
  return ensured.inputPartitions;
}
