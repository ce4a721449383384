/** The topics of contract §6, created when absent; the changelog is compacted and partitioned like the input. */
import type { Admin } from 'kafkajs';
import type { Config } from '../config/config';
import { retry } from '../retry';

/**
 * Partitions of a topic once every one has a leader. A new topic's metadata can briefly say
 * UNKNOWN_TOPIC_OR_PARTITION (Kafka 4), which kafkajs' own `waitForLeaders` does not retry.
 */
export async function partitionCount(
  admin: Admin,
  topic: string,
  timeoutMs = 30_000,
): Promise<number> {
  return retry(
    async () => {
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = meta.topics[0]?.partitions ?? [];
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

export async function ensureTopics(admin: Admin, c: Config): Promise<{ inputPartitions: number }> {
  const existing = new Set(await admin.listTopics());
  const plain = [c.inputTopic, c.verdictTopic, c.spillTopic, c.auditTopic, c.dlqTopic].filter(
    (t) => !existing.has(t),
  );
  if (plain.length > 0) {
    await admin.createTopics({
      waitForLeaders: false,
      topics: plain.map((topic) => ({
        topic,
        numPartitions: c.partitions,
        replicationFactor: c.replicationFactor,
      })),
    });
  }
  for (const t of plain) await partitionCount(admin, t);
  const inputPartitions = await partitionCount(admin, c.inputTopic);
  if (!existing.has(c.changelogTopic)) {
    await admin.createTopics({
      waitForLeaders: false,
      topics: [
        {
          topic: c.changelogTopic,
          numPartitions: inputPartitions,
          replicationFactor: c.replicationFactor,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'min.compaction.lag.ms', value: '0' },
          ],
        },
      ],
    });
  }
  const changelogPartitions = await partitionCount(admin, c.changelogTopic);
  if (changelogPartitions !== inputPartitions) {
    throw new Error(
      `${c.changelogTopic} has ${changelogPartitions} partitions but ${c.inputTopic} has ${inputPartitions}: state is restored per input partition, so they must match`,
    );
  }
  return { inputPartitions };
}
