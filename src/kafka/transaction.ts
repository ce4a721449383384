/**
 * The commit of one batch: its transactional producer (one per input partition, its
 * transactionalId derived from group + topic + partition, so that a new owner fences a zombie),
 * and the transaction that makes the batch's outputs, changelog records and consumer offset
 * visible together or not at all.
 *
 * kafkajs' failures become three typed errors here, where kafkajs raises them, so that the
 * processor decides by class and never by message text (by kafkajs' error types:
 * src/kafka/kafkajs/errorTypes.ts):
 * - `BeforeTransactionError`: nothing was sent (the batch could not be decoded yet, or no
 *   transaction could begin): reading the batch again is exact;
 * - `ProducerFencedError`: the broker refused this producer (a newer one has its
 *   transactionalId, or its epoch or sequence is no longer valid): a new producer is needed;
 * - `TransactionOutcomeUnknownError`: the transaction failed once begun: it may or may not
 *   have committed, so Kafka (changelog, committed offset) is the truth.
 */
import {
  fencingErrorType,
  isRecordTooLarge,
  type Kafka,
  type Message,
  murmur2Partitioner,
  pinPartitions,
  type Producer,
  sendPartitionByPartition,
  type Transaction,
} from './kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { REQUEST_BUDGET_BYTES, outputRequests } from './outputChunks';
import { RECORD_MARGIN } from './recordLimits';
import { errorClass } from '../errors';
import { withTimeout } from '../time';

/**
 * The broker refused one produce request of the transaction as too large: `topic` and the
 * request's `messages` (one topic-partition's). The transaction was aborted: nothing of the
 * batch is visible and the committed state is intact.
 */
export class RecordTooLargeError extends errorClass('RECORD_TOO_LARGE', 'RecordTooLargeError') {
  constructor(
    readonly topic: string,
    readonly messages: readonly Message[],
    override readonly cause: unknown,
  ) {
    super(
      `the broker refused ${messages.length} record(s) for ${topic} as too large: ${messageOf(cause)}`,
      { cause },
    );
  }
}

/** A failure before the batch's transaction began (e.g. the registry is unreachable). */
export class BeforeTransactionError extends errorClass(
  'BEFORE_TRANSACTION',
  'BeforeTransactionError',
) {
  constructor(override readonly cause: unknown) {
    super(`before the transaction: ${messageOf(cause)}`, { cause });
  }
}

/** The broker fenced this producer (`type`: the kafkajs protocol error type). */
export class ProducerFencedError extends errorClass('PRODUCER_FENCED', 'ProducerFencedError') {
  constructor(
    readonly type: string,
    override readonly cause: unknown,
  ) {
    super(`producer fenced (${type}): ${messageOf(cause)}`, { cause });
  }
}

/** The transaction failed after it began: whether it committed is not known here. */
export class TransactionOutcomeUnknownError extends errorClass(
  'TRANSACTION_OUTCOME_UNKNOWN',
  'TransactionOutcomeUnknownError',
) {
  constructor(override readonly cause: unknown) {
    super(`transaction outcome unknown: ${messageOf(cause)}`, { cause });
  }
}

const messageOf = (cause: unknown) => (cause as Error)?.message ?? String(cause);

/** `e` as the typed error of a failure inside the transaction. */
function duringTransaction(e: unknown): ProducerFencedError | TransactionOutcomeUnknownError {
  const type = fencingErrorType(e);
  return type !== null ? new ProducerFencedError(type, e) : new TransactionOutcomeUnknownError(e);
}

/**
 * What a partition's task uses of its transactional producer (kafkajs' Producer is one; the
 * unit tests of src/kafka/partition.ts give a fake): connect, disconnect, and transactions that
 * send records and the consumer offset, then commit or abort.
 */
export interface TransactionalProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  transaction(): Promise<ProducerTransaction>;
}

export type ProducerTransaction = Pick<
  Transaction,
  'send' | 'sendBatch' | 'sendOffsets' | 'commit' | 'abort'
>;

export function transactionalId(c: Config, partition: number): string {
  return `${c.groupId}-${c.inputTopic}-${partition}`;
}

export function newTransactionalProducer(
  kafka: Kafka,
  config: Config,
  partition: number,
  log: Logger,
): Producer {
  const producer = kafka.producer({
    transactionalId: transactionalId(config, partition),
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: config.transactionTimeoutMs,
    allowAutoTopicCreation: false,
    // Where kafkajs' DefaultPartitioner would place a message, with a murmur2 linear in the key
    // (kafkajs' own is quadratic: src/kafka/kafkajs/partitioner.ts); named, so kafkajs does not
    // warn about its v2 change.
    createPartitioner: murmur2Partitioner,
    // kafkajs' default for an idempotent producer is unlimited retries; the client's 200 ms
    // first delay would hold every transaction begun before the previous one's markers are
    // written (CONCURRENT_TRANSACTIONS, KAFKA-5477) for ~200 ms.
    retry: {
      retries: Number.MAX_SAFE_INTEGER,
      initialRetryTime: config.transactionRetryMs,
    },
  });
  if (log.isLevelEnabled('trace')) {
    // Every request of the transaction protocol with its duration (retries show as repeats).
    producer.on(producer.events.REQUEST, ({ payload }) =>
      log.trace({ partition, api: payload.apiName, ms: payload.duration }, 'producer request'),
    );
  }
  return producer;
}

/** What one batch commits: its records by topic and the input position after it. */
export interface BatchCommit {
  sends: ReadonlyMap<string, Message[]>;
  consumerGroupId: string;
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
    const type = fencingErrorType(e);
    throw type !== null ? new ProducerFencedError(type, e) : new BeforeTransactionError(e);
  });
  let sent = begun;
  let offsetsSent = begun;
  try {
    // Usually one request; more when the outputs would exceed the broker's record batch
    // limit together. Dead letters too: they are copies of input records plus headers, so
    // those of a fetched batch near its size limit exceed message.max.bytes together
    // (MESSAGE_TOO_LARGE on every retry: the partition would be stuck for good).
    // Pinned, so that a produce request's results can be checked partition by partition:
    // kafkajs 2.2.4's retry of a partly failed sendBatch skips the brokers that already
    // answered (tulios/kafkajs#1303), so after a leader move outputs can be unwritten (or
    // written twice) while offsets and changelog commit; such a send aborts the transaction
    // (test/unit/partition-per-request.test.ts).
    // One topic-partition per sendBatch (sendPartitionByPartition, src/kafka/kafkajs): a kafkajs
    // retry of a request to several leaders can write one leader's messages twice, unseen by
    // the check of its results.
    pinPartitions(c.sends, c.partitionCounts);
    for (const request of outputRequests([...c.sends], requestBudget(c.limitOf)))
      await sendPartitionByPartition(txn, request, (e, sent) =>
        isRecordTooLarge(e) ? new RecordTooLargeError(sent.topic, sent.messages, e) : e,
      );
    sent = performance.now();
    await txn.sendOffsets({
      consumerGroupId: c.consumerGroupId,
      topics: [{ topic: c.topic, partitions: [{ partition: c.partition, offset: c.nextOffset }] }],
    });
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
