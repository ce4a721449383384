/**
 * What the processor needs of a Kafka client, in the project's own types: nothing outside a
 * client's own folder (src/kafka/kafkajs/) names that client's types (test/unit/
 * transport-boundary.test.ts holds it). Two implementations: kafkajs
 * (src/kafka/kafkajs/transport.ts) and @platformatic/kafka (src/kafka/platformatic/transport.ts),
 * chosen by CG_KAFKA_CLIENT (src/cli/run.ts); docs/decisions.md 205-207 and 219.
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
  /**
   * How many transactional producers the processor runs: 'partition', one per input partition
   * (its transactionalId fences a zombie of the partition: kafkajs, which commits offsets
   * without the group's generation); 'process', one per process shared by the partitions
   * through src/kafka/sharedTransactions.ts (the group coordinator refuses a zombie's offsets by
   * generation, KIP-447: @platformatic/kafka). src/kafka/producers.ts acts on it.
   */
  readonly producerScope: 'partition' | 'process';
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
