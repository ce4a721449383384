/**
 * The on-call commands' errors and exit statuses: the status is the code's `toolExitCode`
 * (src/errors.ts): 2 the input or configuration is wrong, 3 cannot connect or authenticate.
 * How a failure is reported: src/cli/failures.ts.
 */
import { ERROR_CODES, OperationalError, errorClass, errorCode } from '../errors';
import { kafkaFailureCode } from '../kafka/client';

/** The user's input or configuration is wrong; nothing was sent. */
export class UsageError extends errorClass('USAGE_INVALID') {}

/** No answer from the processor's HTTP server. */
export class ProcessorUnreachableError extends errorClass('PROCESSOR_UNREACHABLE') {}

/**
 * The on-call exit status for `e`, or null for a bug: an operational error's by its code; a
 * Kafka client's failure's by the code it is classified as (src/kafka/client.ts: connection,
 * SASL and TLS failures are 3).
 */
export function toolExitCode(e: unknown): 2 | 3 | null {
  const code = e instanceof OperationalError ? errorCode(e) : null;
  const status = code === null ? null : ERROR_CODES[code].toolExitCode;
  if (status !== null) return status;
  const failure = kafkaFailureCode(e);
  return failure === null ? null : ERROR_CODES[failure].toolExitCode;
}
