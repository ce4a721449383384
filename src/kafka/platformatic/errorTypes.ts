/**
 * @platformatic/kafka 2.12.1's failures read by the Kafka protocol error they carry: its
 * ProtocolError's `apiId` (the error's name, e.g. PRODUCER_FENCED) anywhere in the error's
 * tree. The client wraps what it gives up on: a retried operation's attempts in MultipleErrors
 * (`errors`), a request's per-partition errors in ResponseError (`errors`), the failures of
 * concurrent requests to several brokers in MultipleErrors again, and a socket's error as
 * `cause`; so the whole tree is read, never the outer error alone. Its own `producerFenced`
 * flag is set for INVALID_PRODUCER_EPOCH only (PRODUCER_FENCED, error 90, is what Kafka 4
 * answers: bench/probes/platformatic/README.md, gap1), so it is not used.
 */
import { TimeoutError } from '@platformatic/kafka';
import {
  type KafkaFailureCode,
  PRODUCER_FENCING_TYPES,
  TLS_FAILURE_CODE,
} from '../transport/errors';

/**
 * Protocol errors with which the group coordinator refuses a TxnOffsetCommit of a member that
 * is no longer in the generation it names (KIP-447): the member lost its partitions in a
 * rebalance, and whatever it commits now would duplicate the new owner's work. Under one
 * producer per process this, not the producer's epoch, is what fences a zombie
 * (docs/decisions.md 209).
 */
export const GROUP_FENCING_TYPES: ReadonlySet<string> = new Set([
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

/** A request or record batch refused as too large for the topic (`max.message.bytes`). */
export const TOO_LARGE_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
]);

/**
 * Protocol errors the client marks not retriable that a cluster still recovers from by itself:
 * a broker that is down for a restart.
 */
const TRANSIENT_UNRETRIED_TYPES: ReadonlySet<string> = new Set(['BROKER_NOT_AVAILABLE']);

/** Every error in `e`'s tree: itself, its `errors` (AggregateError) and its `cause`, once each. */
export function errorTree(e: unknown): object[] {
  const seen: object[] = [];
  const visit = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || seen.includes(x)) return;
    seen.push(x);
    const { errors, cause } = x as { errors?: unknown; cause?: unknown };
    if (Array.isArray(errors)) for (const child of errors) visit(child);
    visit(cause);
  };
  visit(e);
  return seen;
}

/** The protocol error's name (a ProtocolError's `apiId`), or null for any other error. */
export function apiIdOf(x: object): string | null {
  const { apiId } = x as { apiId?: unknown };
  return typeof apiId === 'string' ? apiId : null;
}

/** The first protocol error in `e`'s tree whose name is in `types`, or null. */
function firstOf(e: unknown, types: ReadonlySet<string>): string | null {
  for (const x of errorTree(e)) {
    const id = apiIdOf(x);
    if (id !== null && types.has(id)) return id;
  }
  return null;
}

/** Whether a protocol error named `type` is anywhere in `e`'s tree. */
export function hasProtocolError(e: unknown, type: string): boolean {
  return errorTree(e).some((x) => apiIdOf(x) === type);
}

/**
 * The protocol error's name when `e` fenced the producer or refused the group member's
 * offsets (PRODUCER_FENCING_TYPES, GROUP_FENCING_TYPES), else null.
 */
export function fencingErrorType(e: unknown): string | null {
  return firstOf(e, PRODUCER_FENCING_TYPES) ?? firstOf(e, GROUP_FENCING_TYPES);
}

/** Whether the fencing type is the group's refusal of a member (the producer is still valid). */
export function isGroupFencing(type: string): boolean {
  return GROUP_FENCING_TYPES.has(type);
}

/** A broker refused a record or batch of `e` as too large. */
export function isRecordTooLarge(e: unknown): boolean {
  return firstOf(e, TOO_LARGE_TYPES) !== null;
}

/**
 * Whether a failure is a cluster in the middle of a failover rather than a setting or a right
 * to fix, as the kafkajs adapter's `isTransientKafkaFailure` says it: some error in the tree
 * is one the client marks retriable (`canRetry`: a refused or dropped connection, NOT_LEADER,
 * LEADER_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT, ...), a
 * request that timed out (its TimeoutError says `canRetry: false`, yet the broker may only be
 * slow), or a broker not available yet. A closed client (`canRetry: false`), an authentication
 * or authorisation failure, or a refused setting are none of these.
 */
export function isTransientPlatformaticFailure(e: unknown): boolean {
  return errorTree(e).some((x) => {
    if (x instanceof TimeoutError) return true;
    if (TRANSIENT_UNRETRIED_TYPES.has(apiIdOf(x) ?? '')) return true;
    return (x as { canRetry?: unknown }).canRetry === true;
  });
}

/** A produce response's topics and partitions, as the client's ResponseError keeps it. */
interface ProduceResponse {
  responses?: { name?: unknown; partitionResponses?: { index?: unknown }[] }[];
}

/** `/responses/<topic>/partition_responses/<partition>`: where a Produce error sits. */
const PRODUCE_ERROR_PATH = /^\/responses\/(\d+)\/partition_responses\/(\d+)$/;

/**
 * The topic-partition a Produce response refused as too large, read from the ResponseError
 * that holds the refusal: its ProtocolError's `path` indexes the response the ResponseError
 * keeps. Null when no such response is in the tree (the request never reached a broker).
 */
export function tooLargePartition(e: unknown): { topic: string; partition: number } | null {
  for (const x of errorTree(e)) {
    const { errors, response } = x as { errors?: unknown; response?: ProduceResponse };
    if (!Array.isArray(errors) || !Array.isArray(response?.responses)) continue;
    for (const child of errors as object[]) {
      if (!TOO_LARGE_TYPES.has(apiIdOf(child) ?? '')) continue;
      const at = PRODUCE_ERROR_PATH.exec(String((child as { path?: unknown }).path));
      const topic = response.responses[Number(at?.[1])];
      const partition = topic?.partitionResponses?.[Number(at?.[2])]?.index;
      if (typeof topic?.name === 'string' && typeof partition === 'number')
        return { topic: topic.name, partition };
    }
  }
  return null;
}

/** The library's error codes (its GenericError's `code`) of a broker not reached in time or at all. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['PLT_KFK_NETWORK', 'PLT_KFK_TIMEOUT']);

const codeOf = (x: object) => {
  const { code } = x as { code?: unknown };
  return typeof code === 'string' ? code : null;
};

/**
 * The project's code for a failure of the library, or null when it is none of these, over the
 * whole error tree, as kafkajs' `classify` over its cause chain (src/kafka/kafkajs/errorTypes.ts):
 * SASL refused (its AuthenticationError, or the broker's SASL_AUTHENTICATION_FAILED), the
 * producer fenced, a record too large, a TLS failure (Node's code on the socket's error, the
 * library's NetworkError's `cause`), then a broker not reached (its NetworkError or
 * TimeoutError). The library gives a code for each, so no message text is read.
 */
export function classifyPlatformaticFailure(e: unknown): KafkaFailureCode | null {
  const tree = errorTree(e);
  if (
    tree.some(
      (x) => codeOf(x) === 'PLT_KFK_AUTHENTICATION' || apiIdOf(x) === 'SASL_AUTHENTICATION_FAILED',
    )
  )
    return 'KAFKA_AUTHENTICATION_FAILED';
  if (firstOf(e, PRODUCER_FENCING_TYPES) !== null) return 'PRODUCER_FENCED';
  if (isRecordTooLarge(e)) return 'RECORD_TOO_LARGE';
  if (tree.some((x) => TLS_FAILURE_CODE.test(codeOf(x) ?? ''))) return 'KAFKA_TLS_FAILED';
  if (tree.some((x) => UNREACHABLE_CODES.has(codeOf(x) ?? ''))) return 'KAFKA_UNREACHABLE';
  return null;
}
