/**
 * The transactional producers of one processor, as its partition tasks ask for them
 * (`forPartition`, again after fencing), by the transport's `producerScope`:
 * - 'partition': a producer of its own per input partition, transactionalId
 *   `<group>-<input topic>-<partition>` (src/kafka/transaction.ts), as kafkajs has always run;
 * - 'process': one producer for the whole process, transactionalId
 *   `<group>-<input topic>-<instance id>` (CG_INSTANCE_ID, random per start when unset), shared
 *   by the partitions through per-partition facades (src/kafka/sharedTransactions.ts, injected as
 *   `share`), closed at stop.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { countedProducer, type TransactionEnd } from './countedProducer';
import { commitDeadlineMs, newTransactionalProducer } from './transaction';
import type { TransactionalProducer, Transport } from './transport';

export interface PartitionProducers {
  /** The producer `partition`'s task commits with (a new one after fencing). */
  forPartition(partition: number): TransactionalProducer;
  /** Stops them (after the tasks closed). */
  close(): Promise<void>;
}

/** One process-wide producer behind per-partition facades: `new SharedTransactions(…)`. */
export type ShareTransactions = (
  newProducer: () => TransactionalProducer,
  options: { log: Logger; deadlineMs: number },
) => PartitionProducers;

/** The process's transactionalId with one producer per process. */
export function processTransactionalId(c: Config, instanceId: string): string {
  return `${c.groupId}-${c.inputTopic}-${instanceId}`;
}

/** CG_INSTANCE_ID, or a random one for this start. */
export function instanceIdOf(c: Config): string {
  return c.instanceId ?? randomUUID();
}

/**
 * The producers of a processor; `ended` is told of each Kafka transaction that ends (the
 * processor's `kafkaTransaction` report).
 */
export function partitionProducers(
  transport: Transport,
  c: Config,
  log: Logger,
  share?: ShareTransactions,
  ended: TransactionEnd = () => undefined,
): PartitionProducers {
  if (transport.producerScope === 'partition')
    return {
      forPartition: (partition) =>
        countedProducer(newTransactionalProducer(transport, c, partition, log), ended),
      close: async () => undefined,
    };
  if (share === undefined)
    throw new Error('a transport with one producer per process needs `shareTransactions`');
  const transactionalId = processTransactionalId(c, instanceIdOf(c));
  log.info({ transactionalId }, 'one transactional producer for the process');
  return share(
    () =>
      countedProducer(
        transport.transactionalProducer({
          transactionalId,
          transactionTimeoutMs: c.transactionTimeoutMs,
          retryMs: c.transactionRetryMs,
          ...(log.isLevelEnabled('trace')
            ? {
                onRequest: (api: string, ms: number) => log.trace({ api, ms }, 'producer request'),
              }
            : {}),
        }),
        ended,
      ),
    { log, deadlineMs: commitDeadlineMs(c) },
  );
}
