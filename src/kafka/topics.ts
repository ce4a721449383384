/** The topics of DESIGN §6, created when absent; the changelog is compacted and partitioned like the input. */
import type { Admin } from 'kafkajs';
import type { Config } from '../config/config';

export async function partitionCount(admin: Admin, topic: string): Promise<number> {
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  return meta.topics[0]?.partitions.length ?? 0;
}

export async function ensureTopics(admin: Admin, c: Config): Promise<{ inputPartitions: number }> {
  const existing = new Set(await admin.listTopics());
  const plain = [c.inputTopic, c.verdictTopic, c.spillTopic, c.auditTopic, c.dlqTopic].filter((t) => !existing.has(t));
  if (plain.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: plain.map((topic) => ({ topic, numPartitions: c.partitions, replicationFactor: c.replicationFactor })),
    });
  }
  const inputPartitions = await partitionCount(admin, c.inputTopic);
  if (!existing.has(c.changelogTopic)) {
    await admin.createTopics({
      waitForLeaders: true,
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
