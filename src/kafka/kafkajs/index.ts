/**
 * The kafkajs boundary: the only way into kafkajs for the rest of src/ (eslint refuses
 * `kafkajs` imports elsewhere). Applies to kafkajs 2.2.4 (pinned in package.json;
 * test/unit/kafkajs-version.test.ts fails on any other). Each workaround of a kafkajs 2.2.4
 * behaviour is a module here, named after its upstream issue in its first lines; what a second
 * Kafka client would have to provide behind this interface: docs/decisions.md.
 *
 * The processor, the client library and the commands use:
 * - producer sends: `checkedSend` (acknowledged partition by partition, re-sent when not);
 * - the transaction: `sendPartitionByPartition` (one topic-partition per produce request, each
 *   checked) on messages pinned by `pinPartitions`, `cacheTransactionCoordinators`;
 * - producers' placement of messages: `murmur2Partitioner` (Kafka's default partitioner on our
 *   own murmur2, linear in the key; kafkajs' own is quadratic), `defaultPartition`;
 * - consumer fetch: kafkajs' Consumer, Batch and EachBatchPayload types, as they are;
 * - admin: kafkajs' Admin and ConfigResourceTypes, as they are;
 * - errors: `classify(error)`, the project's code of a kafkajs failure (by class, `type` and
 *   `code`; message text only where kafkajs 2.2.4 gives nothing else), and the finer
 *   `fencingErrorType`, `isRecordTooLarge`, `isTransientKafkaFailure`;
 * - logs: `kafkajsLogLevel`, `kafkajsEntryLevel` (kafkajs' levels in pino's).
 */
export { Kafka, logLevel, Partitioners, ConfigResourceTypes } from 'kafkajs';
export type {
  Admin,
  Batch,
  Consumer,
  EachBatchPayload,
  IHeaders,
  KafkaMessage,
  LogEntry,
  Message,
  Producer,
  SASLOptions,
  TopicMessages,
  Transaction,
} from 'kafkajs';
export {
  checkedSend,
  MAX_SEND_ROUNDS,
  partitionsOf,
  UnacknowledgedSendError,
  unsentMessages,
  type CheckedSendOptions,
  type CheckedSendReport,
} from './checkedSend';
export { cacheTransactionCoordinators } from './coordinatorCache';
export { murmur2Partitioner } from './partitioner';
export { kafkajsAdmin } from './admin';
export { kafkajsTransport, type KafkajsTransportOptions } from './transport';
export {
  classify,
  FENCING_ERROR_TYPES,
  fencingErrorType,
  isRecordTooLarge,
  isTransientKafkaFailure,
  TOO_LARGE_ERROR_TYPES,
  type KafkaFailureCode,
} from './errorTypes';
export { kafkajsEntryLevel, kafkajsLogLevel } from './logLevels';
