/**
 * The client library's and the commands' Kafka client (src/kafka/transport/connection.ts) on
 * @platformatic/kafka: its admin (admin.ts), the input producer (plainProducer.ts), the topic
 * consumer (topicConsumer.ts) and the classification of its failures (errorTypes.ts). Loaded
 * only when CG_KAFKA_CLIENT=platformatic (src/kafka/client.ts): the library is ESM-only and
 * needs Node ≥ 22.22.
 */
import type { BaseOptions } from '@platformatic/kafka';
import type { Connector, KafkaConnectionOptions, KafkaSecurity } from '../transport/connection';
import { platformaticAdmin } from './admin';
import { baseOptions } from './connection';
import { classifyPlatformaticFailure } from './errorTypes';
import { platformaticIdempotentProducer, platformaticPlainProducer } from './plainProducer';
import { platformaticTopicConsumer } from './topicConsumer';

/** Plaintext without authentication: what a connection without `security` means. */
const NO_SECURITY: KafkaSecurity = {
  kafkaSaslMechanism: 'none',
  kafkaSaslUsername: null,
  kafkaSaslPassword: null,
  kafkaSsl: false,
  kafkaSslCa: null,
  kafkaSslRejectUnauthorized: true,
};

/** The library's options for a connection: where, who, how, and its retries. */
export function connectorBase(o: KafkaConnectionOptions): BaseOptions {
  const security = o.security ?? NO_SECURITY;
  return {
    ...baseOptions({ brokers: o.brokers, clientId: o.clientId, ...security }),
    retries: o.retries,
  };
}

export const platformaticConnector: Connector = {
  connect(options) {
    const base = connectorBase(options);
    const log = options.log.child({ component: 'platformatic' });
    return {
      admin: () => platformaticAdmin(base),
      idempotentProducer: (warnings) =>
        platformaticPlainProducer(platformaticIdempotentProducer(base), warnings),
      topicConsumer: (o) => platformaticTopicConsumer(base, o, log),
    };
  },
  classify: classifyPlatformaticFailure,
};
