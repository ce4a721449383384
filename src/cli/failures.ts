/**
 * How every command reports a failure: one line and a documented exit status for what a person
 * can fix (the code's status in src/errors.ts), the stack and status 1 for anything else (a
 * bug). Commands differ only in which statuses they use and whether the line names the code.
 */
import { ConfigError } from '../config/config';
import {
  ERROR_CODES,
  OperationalError,
  StartupError,
  type StartupFailureCode,
  errorCode,
} from '../errors';
import { toolExitCode } from './toolErrors';

export interface FailureStyle {
  /**
   * `run`: its start-up statuses (2–7, one per code family); `tool`: the other commands' (2 the
   * input or configuration is wrong, 3 cannot connect or authenticate).
   */
  statuses: 'run' | 'tool';
  /** The line ends with `[CODE]` (and a configuration error reads "invalid configuration: …"). */
  namesCode: boolean;
}

/** `run`: a supervisor reads the status, an operator greps the code. */
export const RUN_FAILURES: FailureStyle = { statuses: 'run', namesCode: true };
/** `simulate`: the on-call statuses, and the code named as `run` names it. */
export const SIMULATE_FAILURES: FailureStyle = { statuses: 'tool', namesCode: true };
/** `audit`, `tail`, `inspect`, `acknowledge`, `keys`, `acls`: a sentence and a status. */
export const TOOL_FAILURES: FailureStyle = { statuses: 'tool', namesCode: false };

/** The expected failure behind `e` (an error whose code `run` can end with), or null for a bug. */
export function classifyStartupFailure(e: unknown): StartupError | null {
  if (e instanceof StartupError) return e;
  if (e instanceof ConfigError)
    return new StartupError('CONFIG_INVALID', `invalid configuration: ${e.message}`, { cause: e });
  if (e instanceof OperationalError && ERROR_CODES[e.code].exitCode !== null)
    return new StartupError(e.code as StartupFailureCode, e.message, { cause: e });
  return null;
}

/** What the line says and how the command ends, or null for a bug. */
interface Classified {
  message: string;
  status: number;
  tag: string;
  cause: unknown;
}

function classify(e: unknown, style: FailureStyle): Classified | null {
  if (style.statuses === 'run') {
    const failure = classifyStartupFailure(e);
    if (failure === null) return null;
    const retry = failure.retriable ? ', retriable' : '';
    return {
      message: failure.message,
      status: failure.exitCode,
      tag: ` [${failure.code}${retry}]`,
      cause: failure.cause,
    };
  }
  const status = toolExitCode(e);
  if (status === null) return null;
  const code = errorCode(e);
  const message = (e as Error).message;
  if (!style.namesCode || code === null) return { message, status, tag: '', cause: e };
  const retry = ERROR_CODES[code].retriable ? ', retriable' : '';
  return {
    message: e instanceof ConfigError ? `invalid configuration: ${message}` : message,
    status,
    tag: ` [${code}${retry}]`,
    cause: e,
  };
}

/**
 * Writes the one line (and, with `debug`, the stack of its cause) and returns the exit status.
 * A failure that is not classified is a bug: its stack is always written, status 1.
 */
export function reportFailure(
  command: string,
  e: unknown,
  style: FailureStyle,
  debug: boolean,
  write: (s: string) => void,
): number {
  const failure = classify(e, style);
  if (failure === null) {
    write(
      `compaction-guard ${command}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
    );
    return 1;
  }
  // Some messages name the command already (noEmbeddedMessage): not twice.
  const message = failure.message.replace(`compaction-guard ${command}: `, '');
  write(`compaction-guard ${command}: ${message}${failure.tag}\n`);
  if (debug) {
    const cause = failure.cause instanceof Error ? failure.cause : e;
    write(`${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}\n`);
  }
  return failure.status;
}

/** Runs a command's action; a failure is reported on stderr and sets the exit status. */
export async function reportingFailures(
  command: string,
  style: FailureStyle,
  action: () => void | Promise<void>,
): Promise<void> {
  try {
    await action();
  } catch (e) {
    process.exitCode = reportFailure(command, e, style, false, (s) => process.stderr.write(s));
  }
}
