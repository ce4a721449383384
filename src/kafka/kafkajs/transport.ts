/** The transport (src/kafka/transport) on kafkajs 2.2.4. */
import type { KafkaConnectionOptions } from '../transport/connection';
import type { Transport } from '../transport/transport';
import { kafkajsAdmin } from './admin';
import { kafkajsClient } from './client';
import { cacheTransactionCoordinators } from './coordinatorCache';
import { isTransientKafkaFailure } from './errorTypes';
import { kafkajsGroupConsumer, kafkajsPartitionReader } from './groupConsumer';
import { kafkajsTransactionalProducer } from './transactionalProducer';

export interface KafkajsTransportOptions {
  /** Cache transaction coordinators (coordinatorCache.ts; CG_COORDINATOR_CACHE). */
  coordinatorCache: boolean;
}

export function kafkajsTransport(
  connection: KafkaConnectionOptions,
  o: KafkajsTransportOptions,
): Transport {
  const kafka = kafkajsClient(connection);
  if (o.coordinatorCache) cacheTransactionCoordinators(kafka);
  return {
    producerScope: 'partition',
    admin: () => kafkajsAdmin(kafka.admin()),
    groupConsumer: (options) => kafkajsGroupConsumer(kafka, options),
    partitionReader: (options) => kafkajsPartitionReader(kafka, options),
    transactionalProducer: (options) => kafkajsTransactionalProducer(kafka, options),
    isTransient: isTransientKafkaFailure,
  };
}
