/**
 * The parts the transport on @platformatic/kafka (transport.ts) is built from: the group
 * consumer and the changelog reader (groupConsumer.ts, partitionReader.ts), the transactional
 * producer and the classification of failures (transactionalProducer.ts, errorTypes.ts), and the
 * process-wide producer shared by the partitions (src/kafka/sharedTransactions.ts). Named here
 * by what the transport needs of each, so that it is wired (and unit-tested with fakes) apart
 * from them.
 */
import type { BaseOptions, Consumer } from '@platformatic/kafka';
import { ConfigError, ENV_NAMES } from '../../config/config';
import type { ShareTransactions } from '../producers';
import type {
  GroupConsumer,
  GroupConsumerOptions,
  PartitionReader,
  PartitionReaderOptions,
  TransactionalProducer,
  TransactionalProducerOptions,
} from '../transport';

export interface PlatformaticClients {
  /** The group over the input topic; `client` is the library's Consumer of the group. */
  groupConsumer(
    base: BaseOptions,
    o: GroupConsumerOptions,
  ): GroupConsumer & { readonly client: Consumer };
  partitionReader(base: BaseOptions, o: PartitionReaderOptions): PartitionReader;
  /** `consumerOf(groupId)`: the group's Consumer, whose generation its offsets commit with. */
  transactionalProducer(
    base: BaseOptions,
    o: TransactionalProducerOptions,
    consumerOf: (groupId: string) => Consumer | undefined,
  ): TransactionalProducer;
  isTransient(error: unknown): boolean;
  shareTransactions: ShareTransactions;
}

/**
 * The parts, once the consumer and the producer on the library are in this build: until then
 * CG_KAFKA_CLIENT=platformatic is refused at start with this one line.
 */
export function platformaticClients(): PlatformaticClients {
  throw new ConfigError(
    `${ENV_NAMES.kafkaClient}=platformatic: this build has the admin on @platformatic/kafka but not ` +
      `yet its consumer and producer; set ${ENV_NAMES.kafkaClient}=kafkajs`,
  );
}
