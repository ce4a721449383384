/**
 * The commit of one batch: the transaction that makes the batch's outputs, changelog records
 * and consumer offset visible together or not at all, on a transactional producer of the
 * transport (src/kafka/transport/producer.ts): the partition's own (kafkajs: its
 * transactionalId is `transactionalId` below, so that a new owner fences a zombie) or a facade
 * of the process's one (platformatic), as src/kafka/producers.ts makes them.
 *
 * The transport types its client's failures (src/kafka/transport/errors.ts); here they become
 * what the processor acts on, by class and never by message text:
 * - `BeforeTransactionError`: nothing was sent: reading the batch again is exact;
 * - `ProducerFencedError`: a new producer is needed;
 * - `TransactionOutcomeUnknownError`: the transaction failed once begun: Kafka is the truth;
 * - `RecordTooLargeError`: the broker refused a request as too large, and the abort succeeded.
 */
import type { Config } from '../config/config';
import { withTimeout } from '../time';
import { REQUEST_BUDGET_BYTES, outputRequests } from './outputChunks';
import { pinPartitions } from './placement';
import { RECORD_MARGIN } from './recordLimits';
import {
  BeforeTransactionError,
  ProducerFencedError,
  RecordTooLargeError,
  TransactionOutcomeUnknownError,
  type GroupMetadata,
  type OutRecord,
  type TransactionalProducer,
} from './transport';

/** `e`, a failure inside the transaction, as the typed error the processor acts on. */
function duringTransaction(e: unknown): ProducerFencedError | TransactionOutcomeUnknownError {
  return e instanceof ProducerFencedError ? e : new TransactionOutcomeUnknownError(e);
}

/** The transactionalId of an input partition's own producer: `<group>-<input topic>-<partition>`. */
export function transactionalId(c: Config, partition: number): string {
  return `${c.groupId}-${c.inputTopic}-${partition}`;
}

/** What one batch commits: its records by topic and the input position after it. */
export interface BatchCommit {
  sends: ReadonlyMap<string, OutRecord[]>;
  /** The consumer group whose position the transaction commits. */
  group: GroupMetadata;
  topic: string;
  partition: number;
  /** The offset after the batch's last record. */
  nextOffset: string;
  /** Partitions of each output topic (from ensureTopics): every output is pinned to one. */
  partitionCounts: ReadonlyMap<string, number>;
  /** The largest record each topic takes (recordLimits.ts): requests stay below it. */
  limitOf?: (topic: string) => number;
}

/** Where a committed transaction's time went (ms, from `performance.now()`). */
export interface CommitTimes {
  begun: number;
  sent: number;
  offsetsSent: number;
  committed: number;
}

/**
 * One transaction: the records, the consumer offset, the commit. Throws
 * BeforeTransactionError or ProducerFencedError when none began; ProducerFencedError,
 * TransactionOutcomeUnknownError or RecordTooLargeError after it began (the transaction is
 * aborted first, and `onAborted` called; RecordTooLargeError only once the abort succeeded).
 */
export async function commitBatch(
  producer: TransactionalProducer,
  c: BatchCommit,
  onAborted?: () => void,
): Promise<CommitTimes> {
  const begun = performance.now();
  const txn = await producer.transaction().catch((e: unknown) => {
    throw e instanceof ProducerFencedError ? e : new BeforeTransactionError(e);
  });
  let sent = begun;
  let offsetsSent = begun;
  try {
    // Usually one request; more when the outputs would exceed the broker's record batch
    // limit together. Dead letters too: they are copies of input records plus headers, so
    // those of a fetched batch near its size limit exceed message.max.bytes together
    // (MESSAGE_TOO_LARGE on every retry: the partition would be stuck for good).
    // Pinned, so that the transport can check a produce request's results partition by
    // partition: kafkajs 2.2.4's retry of a partly failed sendBatch skips the brokers that
    // already answered (tulios/kafkajs#1303), so after a leader move outputs can be unwritten
    // (or written twice) while offsets and changelog commit; such a send aborts the transaction
    // (test/unit/partition-per-request.test.ts).
    pinPartitions(c.sends, c.partitionCounts);
    for (const request of outputRequests([...c.sends], requestBudget(c.limitOf)))
      await txn.send(request);
    sent = performance.now();
    await txn.sendOffsets(
      [{ topic: c.topic, partition: c.partition, offset: c.nextOffset }],
      c.group,
    );
    offsetsSent = performance.now();
    await txn.commit();
  } catch (e) {
    const aborted = await txn.abort().then(
      () => true,
      () => false,
    );
    onAborted?.();
    if (e instanceof RecordTooLargeError && aborted) throw e;
    throw duringTransaction(e instanceof RecordTooLargeError ? e.cause : e);
  }
  return { begun, sent, offsetsSent, committed: performance.now() };
}

/** Bytes per produce request of a topic: below its record limit, which bounds a record batch. */
function requestBudget(limitOf?: (topic: string) => number): (topic: string) => number {
  if (limitOf === undefined) return () => REQUEST_BUDGET_BYTES;
  return (topic) => Math.min(REQUEST_BUDGET_BYTES, limitOf(topic) - RECORD_MARGIN);
}

/**
 * A batch's commit that has not ended within `ms` (beyond the transaction timeout, so the
 * coordinator has aborted it unless it committed) is given up on: the caller resynchronises
 * the partition with a new producer (fencing this one), as for any unknown outcome. A kafkajs
 * request can stay unanswered for minutes after a broker comes back, and without a bound its
 * partition would stop with it (the case of test/integration/cluster/cluster-faults.test.ts,
 * "rolling restart of the three brokers under load"; the bound itself is held by
 * test/unit/transaction-errors.test.ts, "gives up on a commit that never ends"). The abandoned
 * commit may still end; nothing waits for it and its result is dropped (the new producer's
 * epoch fences whatever it still sends).
 */
export function commitWithin<T>(commit: Promise<T>, ms: number): Promise<T> {
  return withTimeout(
    commit,
    ms,
    () =>
      new TransactionOutcomeUnknownError(
        new Error(`the batch's transaction did not end within ${ms} ms`),
      ),
  );
}

/** How long a batch's commit may take: the transaction timeout and a margin for its retries. */
export function commitDeadlineMs(c: Pick<Config, 'transactionTimeoutMs'>): number {
  return c.transactionTimeoutMs + 20_000;
}
