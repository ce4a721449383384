/** The transport between the processor and a Kafka client (transport.ts). */
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
} from './errors';
export type {
  GroupMetadata,
  NextOffset,
  ProducerTransaction,
  TransactionalProducer,
  TransactionalProducerOptions,
} from './producer';
export type { FetchedBatch, InRecord, OutRecord, RecordHeaders, TopicRecords } from './records';
export type { Transport } from './transport';
