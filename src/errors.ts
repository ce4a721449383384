/**
 * The one closed list of operational error codes: failures that are expected and explained
 * (bad settings, unreachable or refusing services, misuse of the client), as opposed to bugs.
 * Each code says whether repeating the same operation unchanged may succeed (`retriable`: what
 * src/retry.ts retries by default) and how a command ends with it:
 * - `exitCode`: the exit status of `compaction-guard run` (null: `run` never ends with it);
 * - `toolExitCode`: the status of the other commands (`audit` and the on-call `tail`, `inspect`
 *   and `acknowledge`): 2 the input or configuration is wrong; 3 cannot connect or authenticate;
 *   null: not theirs.
 * An operator (or a supervisor such as systemd or Kubernetes) reads the status; a person reads
 * the one line the CLI prints: which setting, what was tried, what to do. Anything not listed
 * here is a bug: `run` exits 1 with its stack.
 *
 * Input dead letters have their own closed set (src/schema/errors.ts): they are results, not
 * failures.
 */
export const ERROR_CODES = {
  /** A setting has an invalid value (the message names the variable). */
  CONFIG_INVALID: { retriable: false, exitCode: 2, toolExitCode: 2 },
  /** Wrong SASL credentials for Kafka. */
  KAFKA_AUTHENTICATION_FAILED: { retriable: false, exitCode: 3, toolExitCode: 3 },
  /** The broker certificate was not verified by the configured CA. */
  KAFKA_TLS_FAILED: { retriable: false, exitCode: 3, toolExitCode: 3 },
  /** The registry answered 401/403. */
  REGISTRY_AUTH_FAILED: { retriable: false, exitCode: 3, toolExitCode: 3 },
  /** No broker of KAFKA_BROKERS answered in time. */
  KAFKA_UNREACHABLE: { retriable: true, exitCode: 4, toolExitCode: 3 },
  /** SCHEMA_REGISTRY_URL did not answer (or kept failing) while registering the schemas. */
  REGISTRY_UNREACHABLE: { retriable: true, exitCode: 5, toolExitCode: 3 },
  /**
   * The registry answered a registration with a refusal (409: the subject holds a schema ours
   * is not compatible with; 422: invalid): asking again gets the same answer.
   */
  REGISTRY_SCHEMA_REFUSED: { retriable: false, exitCode: 8, toolExitCode: 2 },
  /** CG_HTTP_HOST:CG_HTTP_PORT is taken (often: another instance runs) or cannot be bound. */
  HTTP_PORT_UNAVAILABLE: { retriable: false, exitCode: 6, toolExitCode: null },
  /** The embedded local Kafka or registry of `npm start` could not be started. */
  EMBEDDED_SERVICES_FAILED: { retriable: false, exitCode: 7, toolExitCode: null },
  /**
   * A plain send's messages to some partitions stayed unacknowledged after its bounded re-sends
   * (kafkajs#1303, src/kafka/kafkajs/checkedSend.ts): sending them again may work.
   */
  KAFKA_SEND_UNACKNOWLEDGED: { retriable: true, exitCode: null, toolExitCode: null },
  /** One registry call failed (timeout, 5xx, connection): the next one may work. */
  REGISTRY_UNAVAILABLE: { retriable: true, exitCode: null, toolExitCode: null },
  /** An on-call command's arguments are wrong, or it was not confirmed: nothing was sent. */
  USAGE_INVALID: { retriable: false, exitCode: null, toolExitCode: 2 },
  /**
   * A topic an on-call command reads does not exist on the cluster; or one a client needs (its
   * input, its verdicts) does not and could not be created at connect.
   */
  TOPIC_MISSING: { retriable: false, exitCode: null, toolExitCode: 2 },
  /** `audit`: an input file cannot be opened or read (its only non-zero exit, contract §7). */
  INPUT_UNREADABLE: { retriable: false, exitCode: null, toolExitCode: 2 },
  /** The processor's HTTP server did not answer. */
  PROCESSOR_UNREACHABLE: { retriable: true, exitCode: null, toolExitCode: 3 },
  /** Client library: a call that would send a wrong or meaningless event (nothing was sent). */
  GUARD_USAGE: { retriable: false, exitCode: null, toolExitCode: null },
  /** Client library: a call on a client before `connect()` finished (nothing was sent). */
  GUARD_NOT_CONNECTED: { retriable: false, exitCode: null, toolExitCode: null },
  /** Client library: a call on a session or client after `close()` (nothing was sent). */
  GUARD_CLOSED: { retriable: false, exitCode: null, toolExitCode: null },
  /** Client library: no verdict in time; asking again under the same requestId may get one. */
  GUARD_TIMEOUT: { retriable: true, exitCode: null, toolExitCode: null },
  /** Client library: a send failed; the session must be resumed from its snapshot first. */
  GUARD_SEND_FAILED: { retriable: false, exitCode: null, toolExitCode: null },
  /** Client library: a spill handle whose content does not match its sha256, or unreadable. */
  SPILL_INTEGRITY: { retriable: false, exitCode: null, toolExitCode: null },
  /**
   * Client library: the processor did not apply the spill answer the client had just sent (it
   * asks for the same spill again): unsigned, or signed by a key its trusted ring does not
   * accept for role SPILL. Spilling again with the same key cannot help.
   */
  SPILL_NOT_TRUSTED: { retriable: false, exitCode: null, toolExitCode: null },
  /**
   * Client library: the spill store could not write (or read back) a spill; the SpillFailed
   * answer is sent, so the session HALTs until an operator writes the loss off.
   */
  SPILL_STORE_FAILED: { retriable: false, exitCode: null, toolExitCode: null },
  /**
   * Integrations (`onRefusal: 'throw'`): a summary was held back (refused, no verdict, or
   * degenerate); the history is intact. Asking again unchanged gets the same answer.
   */
  COMPACTION_REFUSED: { retriable: false, exitCode: null, toolExitCode: null },
  /** Claude Code hook: the JSON on stdin is not a hook input the guard reads (names the field). */
  HOOK_INPUT_INVALID: { retriable: false, exitCode: null, toolExitCode: 2 },
  /**
   * Claude Code hook: a session's state file (src/integrations/claude-code/ledger.ts) cannot be
   * read as one, or stays locked by another hook call: the guard fails closed.
   */
  HOOK_STATE_INVALID: { retriable: false, exitCode: null, toolExitCode: 2 },
  /**
   * Processor: an input record cannot be decoded yet (the registry holding its writer's schema
   * is unreachable); its batch fails before its transaction (BEFORE_TRANSACTION).
   */
  DECODER_UNAVAILABLE: { retriable: true, exitCode: null, toolExitCode: null },
  /** Processor: a batch failed before its transaction began (nothing sent): the batch is retried. */
  BEFORE_TRANSACTION: { retriable: true, exitCode: null, toolExitCode: null },
  /** Processor: the broker fenced the partition's producer: the partition is resynchronised. */
  PRODUCER_FENCED: { retriable: false, exitCode: null, toolExitCode: null },
  /** Processor: a transaction failed after it began (committed or not is unknown): resync. */
  TRANSACTION_OUTCOME_UNKNOWN: { retriable: false, exitCode: null, toolExitCode: null },
  /**
   * Processor: a partition's changelog was read back to an input position before the group's
   * committed offset of that partition. Each batch's transaction writes both, so what was read
   * is missing transactions the group committed (a replica that lost or hid them): kept, the
   * state would be stale and those records processed twice. The restore is tried again; the
   * partition processes nothing until a read agrees (src/kafka/groupRestore.ts).
   */
  RESTORE_BEHIND_COMMITTED: { retriable: true, exitCode: null, toolExitCode: null },
  /**
   * Processor on @platformatic/kafka: a read_committed response the client's own filter may have
   * cut committed records from (gap 13, src/kafka/platformatic/records.ts) could not be read
   * again read_uncommitted to filter it ourselves. Nothing of it is delivered; the fetch is
   * tried again.
   */
  FETCH_REREAD_FAILED: { retriable: true, exitCode: null, toolExitCode: null },
  /**
   * Processor: the broker refused a record of a batch's transaction as too large
   * (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE). Sending it again cannot work: the transaction is
   * aborted, the topic's record limit lowered below it, and the batch planned again, so the
   * record that made it is dead-lettered (or its dead letter truncated) instead
   * (src/kafka/recordLimits.ts).
   */
  RECORD_TOO_LARGE: { retriable: false, exitCode: null, toolExitCode: null },
} as const satisfies Record<
  string,
  { retriable: boolean; exitCode: number | null; toolExitCode: 2 | 3 | null }
>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes `run` can end with, each with its exit status. */
export type StartupFailureCode = {
  [K in ErrorCode]: (typeof ERROR_CODES)[K]['exitCode'] extends number ? K : never;
}[ErrorCode];

export const STARTUP_FAILURES = Object.fromEntries(
  Object.entries(ERROR_CODES).filter(([, v]) => v.exitCode !== null),
) as { readonly [K in StartupFailureCode]: (typeof ERROR_CODES)[K] };

/** An expected, explained failure: printed as one line, no stack. */
export class OperationalError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get retriable(): boolean {
    return ERROR_CODES[this.code].retriable;
  }
}

/**
 * The error class of one code: `class ConfigError extends errorClass('CONFIG_INVALID') {}`, then
 * `new ConfigError(message, { cause })`. With `name`, the class's errors carry that name. The
 * code is stated there alone: a subclass with its own constructor passes only its message.
 */
export function errorClass<const C extends ErrorCode>(code: C, name?: string) {
  return class extends OperationalError {
    /** Set once, by OperationalError; declared here only to narrow its type to C. */
    declare readonly code: C;
    constructor(message: string, options?: { cause?: unknown }) {
      super(code, message, options);
      if (name !== undefined) this.name = name;
    }
  };
}

/** A failure `run` ends with at start-up, with its documented exit status. */
export class StartupError extends OperationalError {
  declare readonly code: StartupFailureCode;

  constructor(code: StartupFailureCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'StartupError';
  }

  get exitCode(): number {
    return STARTUP_FAILURES[this.code].exitCode;
  }
}

/** The code of `e` when it is an operational error of the list (by its `code`), else null. */
export function errorCode(e: unknown): ErrorCode | null {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : null;
}

/** Retriable by its code (src/retry.ts's default): anything not in the list is not. */
export function isRetriable(e: unknown): boolean {
  const code = errorCode(e);
  return code !== null && ERROR_CODES[code].retriable;
}

/** For `run --help` and docs/operations.md: one line per exit status. */
export function exitCodeHelp(): string {
  const byStatus = new Map<number, string[]>();
  for (const [code, { exitCode }] of Object.entries(STARTUP_FAILURES))
    byStatus.set(exitCode, [...(byStatus.get(exitCode) ?? []), code]);
  const lines = ['  0  stopped by SIGTERM/SIGINT (clean shutdown)'];
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0]))
    lines.push(`  ${status}  ${codes.join(', ')}`);
  lines.push('  1  anything else (a bug: the stack is printed)');
  return lines.join('\n');
}

/**
 * `e` and its causes, outermost first, each once (a cycle ends the walk): kafkajs' retrier wraps
 * the failure it gave up on as `cause`, so what went wrong is often a level or two down.
 */
export function causeChain(e: unknown): object[] {
  const chain: object[] = [];
  for (let x = e; x !== null && typeof x === 'object' && !chain.includes(x);) {
    chain.push(x);
    x = (x as { cause?: unknown }).cause;
  }
  return chain;
}

/**
 * The distinct messages of `e`'s chain (`causeChain`), outermost first, up to the first cause
 * that is not an Error and at most 5, joined by ": ": one line that shows what went wrong
 * under kafkajs' wrappers, which repeat their cause's message.
 */
export function causeMessages(e: unknown): string {
  const parts: string[] = [];
  for (const x of causeChain(e)) {
    if (!(x instanceof Error) || parts.length >= 5) break;
    if (!parts.includes(x.message)) parts.push(x.message);
  }
  return parts.join(': ');
}
