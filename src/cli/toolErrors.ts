/**
 * Exit statuses and messages of the on-call commands: a sentence, never a stack trace, for what
 * a person can fix. The status is the code's `toolExitCode` (src/errors.ts): 2 the input or
 * configuration is wrong, 3 cannot connect or authenticate.
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

export async function reportToolError(command: string, f: () => Promise<void>): Promise<void> {
  try {
    await f();
  } catch (e) {
    const status = toolExitCode(e);
    if (status === null) throw e;
    const message = (e as Error).message;
    const prefix = message.startsWith(`compaction-guard ${command}:`)
      ? ''
      : `compaction-guard ${command}: `;
    process.stderr.write(`${prefix}${message}\n`);
    process.exitCode = status;
  }
}
