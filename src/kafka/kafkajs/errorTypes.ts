/**
 * Upstream: tulios/kafkajs#1058 (what a connection failure was is known only from the error a
 * retrier wraps, or its text). Applies to kafkajs 2.2.4.
 *
 * kafkajs' failures as the project's error codes, by kafkajs' error classes (`name`), a
 * KafkaJSProtocolError's `type` and a KafkaJSConnectionError's `code` (Node's), over the whole
 * cause chain: kafkajs' retrier wraps the failure it gives up on (KafkaJSNonRetriableError,
 * KafkaJSNumberOfRetriesExceeded) with the original as `cause`. Message text (errorText.ts) only
 * where kafkajs 2.2.4 gives nothing else.
 */
import { KafkaJSProtocolError } from 'kafkajs';
import { causeChain, causeMessages } from '../../errors';
import {
  type KafkaFailureCode,
  PRODUCER_FENCING_TYPES,
  TLS_FAILURE_CODE,
} from '../transport/errors';
import { CONNECTION_FAILURE_TEXT, SASL_FAILURE_TEXT, TLS_FAILURE_TEXT } from './errorText';

/**
 * The kafkajs protocol error types with which a broker refuses a record or record batch as too
 * large for the topic (`max.message.bytes`); kafkajs marks them non-retriable, and so does
 * src/errors.ts (RECORD_TOO_LARGE).
 */
export const TOO_LARGE_ERROR_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
]);

/** kafkajs' error classes of a failure to reach or stay connected to a broker. */
const CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSNumberOfRetriesExceeded',
]);

const nameOf = (x: object) => (x as { name?: unknown }).name;

/** The protocol error type of `x` when it is a KafkaJSProtocolError (or a subclass), else null. */
const protocolType = (x: object) => (x instanceof KafkaJSProtocolError ? x.type : null);

/** A KafkaJSConnectionError carrying Node's code of a TLS failure (kafkajs copies it there). */
function isTlsConnectionError(x: object): boolean {
  const { code } = x as { code?: unknown };
  return (
    nameOf(x) === 'KafkaJSConnectionError' &&
    typeof code === 'string' &&
    TLS_FAILURE_CODE.test(code)
  );
}

/** The KafkaJSProtocolError type of a fencing failure in `e`'s chain, or null. */
export function fencingErrorType(e: unknown): string | null {
  for (const x of causeChain(e)) {
    const type = protocolType(x);
    // kafkajs marks each of these types non-retriable. PRODUCER_FENCED (error code 90) is not in
    // kafkajs 2.2.4's table (brokers answer its older requests with INVALID_PRODUCER_EPOCH); it
    // is in the set for a kafkajs that knows it.
    if (type !== null && PRODUCER_FENCING_TYPES.has(type)) return type;
  }
  return null;
}

/** A broker refused a record of `e` as too large (a type of TOO_LARGE_ERROR_TYPES in the chain). */
export function isRecordTooLarge(e: unknown): boolean {
  return causeChain(e).some((x) => TOO_LARGE_ERROR_TYPES.has(protocolType(x) ?? ''));
}

/**
 * Whether a kafkajs failure is a cluster in the middle of a failover rather than a setting to
 * fix: some error in the cause chain is one kafkajs itself marks retriable (a refused or closed
 * connection, a request timeout, NOT_LEADER, COORDINATOR_NOT_AVAILABLE, ...). kafkajs wraps the
 * last of its own retries in KafkaJSNumberOfRetriesExceeded, marked non-retriable, with the
 * original as `cause`: the chain is looked at, not the outer error alone.
 */
export function isTransientKafkaFailure(e: unknown): boolean {
  return causeChain(e).some((x) => {
    const { name, retriable } = x as { name?: unknown; retriable?: unknown };
    return typeof name === 'string' && name.startsWith('KafkaJS') && retriable === true;
  });
}

/**
 * The project's code for a kafkajs failure, or null when it is none of these. By type first
 * (SASL, fencing, too large, TLS by Node's code); then the SASL and TLS texts (errorText.ts),
 * before the connection classes, because kafkajs 2.2.4 wraps a SASL or TLS failure that carries
 * no type or code in the same KafkaJSConnectionError and KafkaJSNumberOfRetriesExceeded as a
 * broker that is down; then connection by class, and last by text. A TLS answer says the failure
 * looks like TLS: a caller that did not configure TLS treats it as KAFKA_UNREACHABLE.
 */
export function classify(e: unknown): KafkaFailureCode | null {
  const chain = causeChain(e);
  if (chain.some((x) => nameOf(x) === 'KafkaJSSASLAuthenticationError'))
    return 'KAFKA_AUTHENTICATION_FAILED';
  if (fencingErrorType(e) !== null) return 'PRODUCER_FENCED';
  if (isRecordTooLarge(e)) return 'RECORD_TOO_LARGE';
  if (chain.some(isTlsConnectionError)) return 'KAFKA_TLS_FAILED';
  // Text only where kafkajs 2.2.4 gives nothing else (errorText.ts).
  const text = causeMessages(e);
  if (SASL_FAILURE_TEXT.test(text)) return 'KAFKA_AUTHENTICATION_FAILED';
  if (TLS_FAILURE_TEXT.test(text)) return 'KAFKA_TLS_FAILED';
  if (chain.some((x) => CONNECTION_ERRORS.has(String(nameOf(x))))) return 'KAFKA_UNREACHABLE';
  const own = e as { message?: unknown } | null;
  if (typeof own?.message === 'string' && CONNECTION_FAILURE_TEXT.test(own.message))
    return 'KAFKA_UNREACHABLE';
  return null;
}
