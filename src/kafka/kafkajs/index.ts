/**
 * The kafkajs boundary: the only way into kafkajs for the rest of src/ (eslint refuses
 * `kafkajs` imports elsewhere). Applies to kafkajs 2.2.4 (pinned in package.json;
 * test/unit/kafkajs-version.test.ts fails on any other). Each workaround of a kafkajs 2.2.4
 * behaviour is a module here, named after its upstream issue in its first lines.
 *
 * What the rest of src/ takes from here is the transport on kafkajs: `kafkajsTransport` for the
 * processor (and `kafkajsAdmin` for an Admin the caller holds), and `kafkajsConnector` for the
 * client library and the commands (its admin, idempotent producer with checked sends, topic
 * consumer, and `classify`, its failures as the project's codes), and `kafkajsProbeCluster`
 * for the local services' readiness: they see only src/kafka/transport's types
 * (docs/decisions.md 205-207, 237). test/unit/transport-boundary.test.ts holds that, and would
 * list a file that still took kafkajs' own client from here (none does).
 *
 * The rest is for tests and benchmarks, which may name kafkajs:
 * - producer sends: `checkedSend` (acknowledged partition by partition, re-sent when not);
 * - producers' placement of messages: `murmur2Partitioner` (Kafka's default partitioner on our
 *   own murmur2, linear in the key; kafkajs' own is quadratic);
 * - kafkajs' Kafka, Consumer, Producer and message types, as they are, and `kafkajsClient`,
 *   the client the connector and the transport are made on (pino logs, TLS, SASL);
 * - errors: `classify(error)`, the project's code of a kafkajs failure (by class, `type` and
 *   `code`; message text only where kafkajs 2.2.4 gives nothing else);
 * - logs: `kafkajsLogLevel`, `kafkajsEntryLevel` (kafkajs' levels in pino's).
 */
export { Kafka, logLevel, Partitioners } from 'kafkajs';
export type { Consumer, KafkaMessage, LogEntry, Message, Producer, SASLOptions } from 'kafkajs';
export { checkedSend } from './checkedSend';
export { murmur2Partitioner } from './partitioner';
export { kafkajsAdmin } from './admin';
export { kafkajsClient } from './client';
export { kafkajsConnector } from './connector';
export { kafkajsPlainProducer } from './plainProducer';
export { kafkajsProbeCluster } from './readiness';
export { kafkajsTransport, type KafkajsTransportOptions } from './transport';
export { classify } from './errorTypes';
export { kafkajsEntryLevel, kafkajsLogLevel } from './logLevels';
