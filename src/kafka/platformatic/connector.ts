/**
 * The client library's and the commands' Kafka client (src/kafka/transport/connection.ts) on
 * @platformatic/kafka: its admin (admin.ts), the input producer (plainProducer.ts), the topic
 * consumer (topicConsumer.ts) and the classification of its failures (errorTypes.ts). Loaded
 * only when CG_KAFKA_CLIENT=platformatic (src/kafka/client.ts): the library is ESM-only and
 * needs Node ≥ 22.22.
 */
import type { BaseOptions } from '@platformatic/kafka';
import { DEFAULTS } from '../../config/config';
import type { Connector, KafkaConnectionOptions } from '../transport/connection';
import { platformaticAdmin } from './admin';
import { baseOptions } from './connection';
import { classifyPlatformaticFailure } from './errorTypes';
import { platformaticIdempotentProducer, platformaticPlainProducer } from './plainProducer';
import { platformaticTopicConsumer } from './topicConsumer';

/** The library's options for a connection: where, who, how, and its retries. */
export function connectorBase(o: KafkaConnectionOptions): BaseOptions {
  // Without `security`: the settings' defaults, plaintext without authentication.
  const security = o.security ?? DEFAULTS;
  return {
    ...baseOptions({ ...security, brokers: o.brokers, clientId: o.clientId }),
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
