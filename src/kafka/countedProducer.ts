/**
 * A transactional producer whose transactions are counted as they end: what the broker sees
 * (one per batch with a producer per partition; one per group of batches with one per process,
 * src/kafka/producers.ts; barriers included), beside the processor's count of batches.
 */
import type { ProducerTransaction, TransactionalProducer } from './transport';

export type TransactionEnd = (outcome: 'committed' | 'aborted') => void;

export function countedProducer(
  producer: TransactionalProducer,
  ended: TransactionEnd,
): TransactionalProducer {
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    transaction: async () => counted(await producer.transaction(), ended),
  };
}

function counted(txn: ProducerTransaction, ended: TransactionEnd): ProducerTransaction {
  return {
    send: (request) => txn.send(request),
    sendOffsets: (offsets, group) => txn.sendOffsets(offsets, group),
    commit: async () => {
      await txn.commit();
      ended('committed');
    },
    abort: async () => {
      await txn.abort();
      ended('aborted');
    },
  };
}
