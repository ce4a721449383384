/**
 * The errors of the client. Bad use is refused before anything is sent
 * (GuardUsageError names the field and what was expected); no verdict in time is a
 * GuardTimeoutError, and the documented rule for it is: no verdict means no compaction (fail
 * closed). Each is `errorClass(code)` of the one list of src/errors.ts (retriable or not).
 */
import { errorClass } from '../errors';

/** A call that would send a wrong or meaningless event: nothing was sent. */
export class GuardUsageError extends errorClass('GUARD_USAGE', 'GuardUsageError') {
  constructor(
    /** The argument at fault, e.g. `tokens`, `tailStart`, `summaryInput.end`. */
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** A call on a client before `connect()` finished (nothing was sent): connect first. */
export class GuardNotConnectedError extends errorClass(
  'GUARD_NOT_CONNECTED',
  'GuardNotConnectedError',
) {}

/** A call on a session or client after `close()` (nothing was sent). */
export class GuardClosedError extends errorClass('GUARD_CLOSED', 'GuardClosedError') {}

/**
 * No verdict arrived in time. The request may still be decided later; the orchestrator must not
 * compact on the strength of it (contract §5: it asks before it commits; no answer is no).
 */
export class GuardTimeoutError extends errorClass('GUARD_TIMEOUT', 'GuardTimeoutError') {
  constructor(
    readonly sessionId: string,
    readonly requestId: string,
    readonly timeoutMs: number,
  ) {
    super(
      `no verdict for session ${JSON.stringify(sessionId)} request ${JSON.stringify(requestId)} within ${timeoutMs} ms: do not compact (fail closed)`,
    );
  }
}

/**
 * A send to Kafka failed: the session's sequence is no longer known to be intact, so the session
 * refuses further calls. Restart it with `GuardedSession.resume` from its last snapshot (the
 * unacknowledged events are sent again under the same seq and eventId: redeliveries, not gaps).
 */
export class GuardSendError extends errorClass('GUARD_SEND_FAILED', 'GuardSendError') {}

/** A spill handle whose content does not match its sha256, or that cannot be read. */
export class SpillIntegrityError extends errorClass('SPILL_INTEGRITY', 'SpillIntegrityError') {}

/**
 * The processor did not apply the spill answer just sent and asks for the same spill again: it
 * has a trusted key ring, and the answer was unsigned or its key is not trusted for role SPILL
 * (the message names the fix: src/client/spillAnswerCheck.ts). No compaction: do not retry
 * unchanged.
 */
export class SpillNotTrustedError extends errorClass('SPILL_NOT_TRUSTED', 'SpillNotTrustedError') {}

/** The spill store could not write or read back a spill (the message names the store and why). */
export class SpillStoreError extends errorClass('SPILL_STORE_FAILED', 'SpillStoreError') {}
