/** The transport's admin on kafkajs' Admin. */
import { ConfigResourceTypes, type Admin } from 'kafkajs';
import type { TransportAdmin } from '../transport/admin';

export function kafkajsAdmin(admin: Admin): TransportAdmin {
  return {
    connect: () => admin.connect(),
    disconnect: () => admin.disconnect(),
    listTopics: () => admin.listTopics(),
    brokerCount: async () => (await admin.describeCluster()).brokers.length,
    createTopics: async (topics) => {
      await admin.createTopics({ waitForLeaders: false, topics });
    },
    topicLayouts: async (topics) => (await admin.fetchTopicMetadata({ topics })).topics,
    topicConfigs: async (topics, names) => {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: names,
        })),
      });
      return new Map(
        resources.map((r) => [
          r.resourceName,
          new Map(r.configEntries.map((e) => [e.configName, e.configValue])),
        ]),
      );
    },
    committedOffsets: async (groupId, topic) => {
      const [found] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return found?.partitions ?? [];
    },
    topicOffsets: (topic) => admin.fetchTopicOffsets(topic),
  };
}
