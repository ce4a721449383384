/**
 * The one closed set of reasons `run` gives up at start-up, each with its exit status.
 * An operator (or a supervisor such as systemd or Kubernetes) reads the status; a person reads
 * the one line the CLI prints: which setting, what was tried, what to do. Anything not listed
 * here is a bug and exits 1 with its stack.
 */
export const STARTUP_FAILURES = {
  /** A setting has an invalid value (the message names the variable). */
  CONFIG_INVALID: { exitCode: 2, retriable: false },
  /** Wrong SASL credentials for Kafka. */
  KAFKA_AUTHENTICATION_FAILED: { exitCode: 3, retriable: false },
  /** The broker certificate was not verified by the configured CA. */
  KAFKA_TLS_FAILED: { exitCode: 3, retriable: false },
  /** The registry answered 401/403. */
  REGISTRY_AUTH_FAILED: { exitCode: 3, retriable: false },
  /** No broker of KAFKA_BROKERS answered in time. */
  KAFKA_UNREACHABLE: { exitCode: 4, retriable: true },
  /** SCHEMA_REGISTRY_URL did not answer (or kept failing) while registering the schemas. */
  REGISTRY_UNREACHABLE: { exitCode: 5, retriable: true },
  /** CG_HTTP_HOST:CG_HTTP_PORT is taken (often: another instance runs) or cannot be bound. */
  HTTP_PORT_UNAVAILABLE: { exitCode: 6, retriable: false },
  /** The embedded local Kafka or registry of `npm start` could not be started. */
  EMBEDDED_SERVICES_FAILED: { exitCode: 7, retriable: false },
} as const;

export type StartupFailureCode = keyof typeof STARTUP_FAILURES;

/** A start-up failure that is expected and explained: printed as one line, no stack. */
export class StartupError extends Error {
  constructor(
    readonly code: StartupFailureCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupError';
  }

  get exitCode(): number {
    return STARTUP_FAILURES[this.code].exitCode;
  }
}

/** For `run --help` and the README: one line per exit status. */
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
