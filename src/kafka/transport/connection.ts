/**
 * What the client library (src/client), the commands (src/cli) and the tools need of a Kafka
 * client beside the processor's transport (transport.ts): where and how to connect, the admin,
 * an idempotent producer of acknowledged sends, and a read_committed consumer of whole topics.
 * Each client gives them through its `Connector` (src/kafka/kafkajs/connector.ts);
 * src/kafka/client.ts chooses it (docs/decisions.md 237).
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/config';
import type { TransportAdmin } from './admin';
import type { KafkaFailureCode } from './errors';
import type { PlainProducer } from './producer';
import type { TopicConsumer, TopicConsumerOptions } from './topicConsumer';

/** The security-related part of the Config (see config.ts). */
export type KafkaSecurity = Pick<
  Config,
  | 'kafkaSaslMechanism'
  | 'kafkaSaslUsername'
  | 'kafkaSaslPassword'
  | 'kafkaSsl'
  | 'kafkaSslCa'
  | 'kafkaSslRejectUnauthorized'
>;

/**
 * A TCP connect that does not complete in this time is a connection error (kafkajs' default
 * is 1 s, too short for a TLS handshake to a busy broker; longer only delays a clear error).
 */
export const CONNECTION_TIMEOUT_MS = 5_000;
/** A broker that does not answer the SASL exchange in this time fails the connection. */
export const AUTHENTICATION_TIMEOUT_MS = 5_000;

/** Where and how a client connects, and where its own logs go. */
export interface KafkaConnectionOptions {
  brokers: string[];
  clientId: string;
  /** The client's own logs go to a child of it (`component`: the client's name). */
  log: Logger;
  /** TLS and SASL; omitted: plaintext, no authentication. */
  security?: KafkaSecurity;
  /** How often a failed request is tried again before its caller sees the failure. */
  retries: number;
}

/** One connection's clients; nothing is opened until one of them connects. */
export interface KafkaConnection {
  admin(): TransportAdmin;
  /**
   * The producer of input events (the client, `simulate`): idempotent, one request in flight,
   * retrying until the broker takes a batch; `log` is told of re-sent partitions.
   */
  idempotentProducer(log: Pick<Logger, 'warn'>): PlainProducer;
  topicConsumer(options: TopicConsumerOptions): TopicConsumer;
}

/** A Kafka client as the client library and the commands use it. */
export interface Connector {
  connect(options: KafkaConnectionOptions): KafkaConnection;
  /** The project's code of one of this client's failures, or null when it is none of them. */
  classify(error: unknown): KafkaFailureCode | null;
}
