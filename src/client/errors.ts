/**
 * The client's errors. Bad use is refused before anything is sent (GuardUsageError names the
 * field and what was expected); no verdict in time is a GuardTimeoutError, and the documented
 * rule for it is: no verdict means no compaction (fail closed). Their codes (and whether each is
 * retriable) are in the one list of src/errors.ts.
 */
import { OperationalError } from '../errors';

type Options = { cause?: unknown };

/** A call that would send a wrong or meaningless event: nothing was sent. */
export class GuardUsageError extends OperationalError {
  override readonly name = 'GuardUsageError';
  override readonly code = 'GUARD_USAGE';
  constructor(
    /** The argument at fault, e.g. `tokens`, `tailStart`, `summaryInput.end`. */
    readonly field: string,
    message: string,
  ) {
    super('GUARD_USAGE', `${field}: ${message}`);
  }
}

/** A call on a session or client after `close()` (nothing was sent). */
export class GuardClosedError extends OperationalError {
  override readonly name = 'GuardClosedError';
  override readonly code = 'GUARD_CLOSED';
  constructor(message: string, options?: Options) {
    super('GUARD_CLOSED', message, options);
  }
}

/**
 * No verdict arrived in time. The request may still be decided later; the orchestrator must not
 * compact on the strength of it (contract §5: it asks before it commits; no answer is no).
 */
export class GuardTimeoutError extends OperationalError {
  override readonly name = 'GuardTimeoutError';
  override readonly code = 'GUARD_TIMEOUT';
  constructor(
    readonly sessionId: string,
    readonly requestId: string,
    readonly timeoutMs: number,
  ) {
    super(
      'GUARD_TIMEOUT',
      `no verdict for session ${JSON.stringify(sessionId)} request ${JSON.stringify(requestId)} within ${timeoutMs} ms: do not compact (fail closed)`,
    );
  }
}

/**
 * A send to Kafka failed: the session's sequence is no longer known to be intact, so the session
 * refuses further calls. Restart it with `GuardedSession.resume` from its last snapshot (the
 * unacknowledged events are sent again under the same seq and eventId: redeliveries, not gaps).
 */
export class GuardSendError extends OperationalError {
  override readonly name = 'GuardSendError';
  override readonly code = 'GUARD_SEND_FAILED';
  constructor(message: string, options?: Options) {
    super('GUARD_SEND_FAILED', message, options);
  }
}

/** A spill handle whose content does not match its sha256, or that cannot be read. */
export class SpillIntegrityError extends OperationalError {
  override readonly name = 'SpillIntegrityError';
  override readonly code = 'SPILL_INTEGRITY';
  constructor(message: string, options?: Options) {
    super('SPILL_INTEGRITY', message, options);
  }
}
