/** How `run` reports a start-up that failed: one line and a documented exit status (src/errors.ts). */
import { ConfigError } from '../config/config';
import { ERROR_CODES, OperationalError, StartupError, type StartupFailureCode } from '../errors';

/** The expected failure behind `e` (an error whose code `run` can end with), or null for a bug. */
export function classifyStartupFailure(e: unknown): StartupError | null {
  if (e instanceof StartupError) return e;
  if (e instanceof ConfigError)
    return new StartupError('CONFIG_INVALID', `invalid configuration: ${e.message}`, { cause: e });
  if (e instanceof OperationalError && ERROR_CODES[e.code].exitCode !== null)
    return new StartupError(e.code as StartupFailureCode, e.message, { cause: e });
  return null;
}

/**
 * Writes the one line (and, with `debug`, the stack) and returns the exit status. A failure
 * that is not classified is a bug: its stack is always written, status 1.
 */
export function reportStartupFailure(
  command: string,
  e: unknown,
  debug: boolean,
  write: (s: string) => void,
): number {
  const failure = classifyStartupFailure(e);
  if (failure === null) {
    write(
      `compaction-guard ${command}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    return 1;
  }
  const retry = failure.retriable ? ', retriable' : '';
  write(`compaction-guard ${command}: ${failure.message} [${failure.code}${retry}]\n`);
  if (debug) {
    const cause = failure.cause instanceof Error ? failure.cause : failure;
    write(`${cause.stack ?? cause.message}\n`);
  }
  return failure.exitCode;
}
