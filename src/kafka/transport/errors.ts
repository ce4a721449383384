/**
 * The failures of a transaction, typed where the transport raises them, so that the processor
 * decides by class and never by a client's error types or message text (each transport
 * classifies its client's errors: for kafkajs, src/kafka/kafkajs/errorTypes.ts):
 * - `BeforeTransactionError`: nothing was sent (the batch could not be decoded yet, or no
 *   transaction could begin): reading the batch again is exact;
 * - `ProducerFencedError`: the broker refused this producer (a newer one has its
 *   transactionalId, or its epoch or sequence is no longer valid): a new producer is needed;
 * - `TransactionOutcomeUnknownError`: the transaction failed once begun: it may or may not
 *   have committed, so Kafka (changelog, committed offset) is the truth;
 * - `RecordTooLargeError`: the broker refused one produce request as too large.
 */
import { errorClass, type ErrorCode } from '../../errors';
import type { OutRecord } from './records';

/** The project's codes for a Kafka client's failure (what a `Connector` classifies). */
export type KafkaFailureCode = Extract<
  ErrorCode,
  | 'KAFKA_AUTHENTICATION_FAILED'
  | 'KAFKA_TLS_FAILED'
  | 'KAFKA_UNREACHABLE'
  | 'PRODUCER_FENCED'
  | 'RECORD_TOO_LARGE'
>;

/**
 * Node's codes of a TLS failure (`ERR_TLS_*`, OpenSSL's `ERR_SSL_*`, the X.509 verification
 * codes), as each client passes on the socket's error.
 */
export const TLS_FAILURE_CODE =
  /^ERR_(TLS|SSL)_|CERT|SELF_SIGNED|^UNABLE_TO_|^HOSTNAME_MISMATCH$|^INVALID_CA$/;

const messageOf = (cause: unknown) => (cause as Error)?.message ?? String(cause);

/**
 * The Kafka protocol errors (by name) after which a transactional producer itself is refused: a
 * newer producer holds its transactionalId, or its epoch, id or sequence is no longer valid, or
 * it may not use its id. Each transport reads its client's errors for these names
 * (src/kafka/kafkajs/errorTypes.ts, src/kafka/platformatic/errorTypes.ts). PRODUCER_FENCED
 * (error code 90) is what Kafka 4 answers; older request versions get INVALID_PRODUCER_EPOCH.
 */
export const PRODUCER_FENCING_TYPES: ReadonlySet<string> = new Set([
  'INVALID_PRODUCER_EPOCH',
  'PRODUCER_FENCED',
  'TRANSACTION_COORDINATOR_FENCED',
  'INVALID_PRODUCER_ID_MAPPING',
  'INVALID_TXN_STATE',
  'UNKNOWN_PRODUCER_ID',
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
]);

/**
 * The broker refused one produce request of the transaction as too large: `topic` and the
 * request's `messages` (one topic-partition's). Once the transaction is aborted, nothing of the
 * batch is visible and the committed state is intact.
 */
export class RecordTooLargeError extends errorClass('RECORD_TOO_LARGE', 'RecordTooLargeError') {
  constructor(
    readonly topic: string,
    readonly messages: readonly OutRecord[],
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

/** The broker fenced this producer (`type`: the protocol error's name, e.g. PRODUCER_FENCED). */
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
