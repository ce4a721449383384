/** The admin calls of the processor and the client's start-up: topics, their configs, offsets. */

/** A topic to create. */
export interface NewTopic {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries?: { name: string; value: string }[];
}

/** A topic's partitions as the metadata says: each one's leader (-1: none) and replicas. */
export interface TopicLayout {
  name: string;
  partitions: { partitionId: number; leader: number; replicas: number[] }[];
}

/** A partition's offsets: the first still held, and the next to be written. */
export interface PartitionOffsets {
  partition: number;
  low: string;
  high: string;
}

export interface TransportAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  /** Brokers in the cluster. */
  brokerCount(): Promise<number>;
  /** Creates the topics (not waiting for their leaders: the caller does, with topicLayouts). */
  createTopics(topics: NewTopic[]): Promise<void>;
  topicLayouts(topics: string[]): Promise<TopicLayout[]>;
  /**
   * The values of `names` of each topic, as the broker applies them (the topic's own or the
   * broker's default): topic → name → value; a topic or name the broker does not say is absent.
   */
  topicConfigs(topics: string[], names: string[]): Promise<Map<string, Map<string, string>>>;
  /** `groupId`'s committed offset of each partition of `topic` ('-1': none). */
  committedOffsets(
    groupId: string,
    topic: string,
  ): Promise<{ partition: number; offset: string }[]>;
  topicOffsets(topic: string): Promise<PartitionOffsets[]>;
}
