/**
 * The transactional producers of one processor, as its partition tasks ask for them
 * (`forPartition`, again after fencing), by the transport's `producerScope`:
 * - 'partition': a producer of its own per input partition, transactionalId
 *   `<group>-<input topic>-<partition>` (src/kafka/transaction.ts), as kafkajs has always run;
 * - 'process': one producer for the whole process, transactionalId
 *   `<group>-<input topic>-<instance id>` (CG_INSTANCE_ID, random per start when unset), shared
 *   by the partitions through per-partition facades (src/kafka/sharedTransactions.ts), closed at
 *   stop.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { countedProducer, type TransactionEnd } from './countedProducer';
import { SharedTransactions } from './sharedTransactions';
import { commitDeadlineMs, transactionalId } from './transaction';
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

/** How the producers of a processor are made and reported (the processor's, or a test's). */
export interface ProducersOptions {
  /** Told of each Kafka transaction that ends (the processor's `kafkaTransaction` report). */
  ended?: TransactionEnd;
  /** Shares one producer among the partitions; default: `new SharedTransactions(…)`. */
  share?: ShareTransactions;
}

const sharedTransactions: ShareTransactions = (newProducer, options) =>
  new SharedTransactions(newProducer, options);

export function partitionProducers(
  transport: Transport,
  c: Config,
  log: Logger,
  { ended = () => undefined, share = sharedTransactions }: ProducersOptions = {},
): PartitionProducers {
  const counted = (id: string, producerLog: Logger) =>
    countedProducer(newTransactionalProducer(transport, c, id, producerLog), ended);
  if (transport.producerScope === 'partition')
    return {
      forPartition: (partition) => counted(transactionalId(c, partition), log.child({ partition })),
      close: async () => undefined,
    };
  const id = processTransactionalId(c, instanceIdOf(c));
  log.info({ transactionalId: id }, 'one transactional producer for the process');
  return share(() => counted(id, log), { log, deadlineMs: commitDeadlineMs(c) });
}

/**
 * A transactional producer of the transport with the processor's settings; at trace level,
 * every request of the transaction protocol with its duration (retries show as repeats).
 */
function newTransactionalProducer(
  transport: Transport,
  c: Config,
  transactionalId: string,
  log: Logger,
): TransactionalProducer {
  return transport.transactionalProducer({
    transactionalId,
    transactionTimeoutMs: c.transactionTimeoutMs,
    retryMs: c.transactionRetryMs,
    ...(log.isLevelEnabled('trace')
      ? { onRequest: (api: string, ms: number) => log.trace({ api, ms }, 'producer request') }
      : {}),
  });
}
