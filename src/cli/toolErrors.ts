/**
 * The on-call commands' errors and exit statuses: the status is the code's `toolExitCode`
 * (src/errors.ts): 2 the input or configuration is wrong, 3 cannot connect or authenticate.
 * How a failure is reported: src/cli/failures.ts.
 */
import { ERROR_CODES, OperationalError, errorClass, errorCode } from '../errors';

/** The user's input or configuration is wrong; nothing was sent. */
export class UsageError extends errorClass('USAGE_INVALID') {}

/** No answer from the processor's HTTP server. */
export class ProcessorUnreachableError extends errorClass('PROCESSOR_UNREACHABLE') {}

/** kafkajs' connection failures carry no code of ours: they are known by name and message. */
const KAFKA_CONNECTION_FAILURE =
  /ECONNREFUSED|ENOTFOUND|Connection error|KafkaJSNumberOfRetriesExceeded|KafkaJSConnectionError/;

/** The on-call exit status for `e`, or null for a bug. */
export function toolExitCode(e: unknown): 2 | 3 | null {
  const code = e instanceof OperationalError ? errorCode(e) : null;
  const status = code === null ? null : ERROR_CODES[code].toolExitCode;
  if (status !== null) return status;
  return KAFKA_CONNECTION_FAILURE.test(`${(e as Error).name} ${(e as Error).message}`) ? 3 : null;
}
