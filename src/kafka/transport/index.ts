/**
 * The transport between the processor and a Kafka client (transport.ts). The connection of the
 * client library and the commands (connection.ts) is imported from its own file: it names the
 * Config, whose settings import this index (recordLimits.ts).
 */
export type { NewTopic, PartitionOffsets, TopicLayout, TransportAdmin } from './admin';
export type {
  BatchControl,
  GroupConsumer,
  GroupConsumerOptions,
  GroupHandlers,
  PartitionReader,
  PartitionReaderOptions,
} from './consumer';
export {
  BeforeTransactionError,
  ProducerFencedError,
  RecordTooLargeError,
  TransactionOutcomeUnknownError,
  type KafkaFailureCode,
} from './errors';
export type {
  GroupMetadata,
  NextOffset,
  PlainProducer,
  ProducerTransaction,
  TransactionalProducer,
  TransactionalProducerOptions,
} from './producer';
export type { ProbeCluster, ReadinessProbe, ReadinessProbeOptions } from './readiness';
export type { FetchedBatch, InRecord, OutRecord, RecordHeaders, TopicRecords } from './records';
export type { TopicConsumer, TopicConsumerOptions, TopicHandlers } from './topicConsumer';
export type { Transport } from './transport';
