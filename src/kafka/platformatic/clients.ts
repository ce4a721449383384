/**
 * The parts the transport on @platformatic/kafka (transport.ts) is built from: the group
 * consumer and the changelog reader (groupConsumer.ts, partitionReader.ts), the transactional
 * producer and the classification of failures (transactionalProducer.ts, errorTypes.ts). (The
 * processor shares the producer among its partitions itself: src/kafka/producers.ts.) Named here
 * by what the transport needs of each, so that it is wired (and unit-tested with fakes) apart
 * from them.
 */
import type { BaseOptions, Consumer } from '@platformatic/kafka';
import { isTransientPlatformaticFailure } from './errorTypes';
import { platformaticGroupConsumer } from './groupConsumer';
import { platformaticPartitionReader } from './partitionReader';
import { platformaticTransactionalProducer } from './transactionalProducer';
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
}

/** The parts on @platformatic/kafka 2.12.1. */
export function platformaticClients(): PlatformaticClients {
  return {
    groupConsumer: platformaticGroupConsumer,
    partitionReader: platformaticPartitionReader,
    transactionalProducer: platformaticTransactionalProducer,
    isTransient: isTransientPlatformaticFailure,
  };
}
