/**
 * What the processor needs of a Kafka client, in the project's own types: nothing outside a
 * client's own folder (src/kafka/kafkajs/) names that client's types (test/unit/
 * transport-boundary.test.ts holds it). One implementation today, kafkajs
 * (src/kafka/kafkajs/transport.ts); what a second one must provide: docs/decisions.md 205-207.
 */
import type { TransportAdmin } from './admin';
import type {
  GroupConsumer,
  GroupConsumerOptions,
  PartitionReader,
  PartitionReaderOptions,
} from './consumer';
import type { TransactionalProducer, TransactionalProducerOptions } from './producer';

export interface Transport {
  admin(): TransportAdmin;
  groupConsumer(options: GroupConsumerOptions): GroupConsumer;
  partitionReader(options: PartitionReaderOptions): PartitionReader;
  transactionalProducer(options: TransactionalProducerOptions): TransactionalProducer;
  /**
   * A failure the cluster may recover from by itself (a broker or coordinator not reachable yet,
   * a leader moving), as opposed to one of settings or rights: start-up steps retry on it.
   */
  isTransient(error: unknown): boolean;
}
