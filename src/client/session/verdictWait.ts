/**
 * Waiting for one request's verdict, within one deadline that runs from the call: while the
 * request is queued behind the session's earlier events, while it is sent, and while the
 * verdict is on its way. No verdict in time is a GuardTimeoutError (fail closed), and a request
 * still queued when the time is up is never sent.
 */
import type { Verdict } from '../../engine/outputs';
import { withTimeout } from '../../time';
import { GuardTimeoutError, GuardUsageError } from '../errors';

/** The client's shared verdict consumer, as a session uses it. */
export interface VerdictSource {
  /** Registers interest in the verdict of the request `eventId` before it is sent. */
  expectVerdict(sessionId: string, requestId: string, eventId: string): Promise<Verdict>;
  forgetVerdict(sessionId: string, requestId: string): void;
}

/** The requests of one session waiting for their verdict: one wait per requestId at a time. */
export class VerdictWaiter {
  private readonly waiting = new Set<string>();

  constructor(
    private readonly source: VerdictSource,
    readonly sessionId: string,
  ) {}

  /** A wait for `requestId`'s verdict; its deadline runs from now (`outcome`). */
  begin(requestId: string, timeoutMs: number): VerdictWait {
    return new VerdictWait(this.source, this.waiting, this.sessionId, requestId, timeoutMs);
  }
}

/**
 * One request's wait: `queued` until its event is about to be sent, then `registered` with the
 * consumer until the verdict comes; `expired` when the deadline passed first (a request still
 * queued is then not sent).
 */
type WaitState = 'queued' | 'registered' | 'expired';

export class VerdictWait {
  private state: WaitState = 'queued';
  private verdict: Promise<Verdict> | null = null;

  constructor(
    private readonly source: VerdictSource,
    private readonly waiting: Set<string>,
    private readonly sessionId: string,
    private readonly requestId: string,
    private readonly timeoutMs: number,
  ) {}

  /** Before the request is handed over: refuses it when the time is up already. */
  requireTime(): void {
    if (this.state === 'expired') throw this.timedOut();
  }

  /**
   * The request `eventId` is about to be sent: listen for its verdict, the one that names it
   * (requestEventId). The same requestId waiting twice at once is bad use.
   */
  register(eventId: string): void {
    if (this.waiting.has(this.requestId))
      throw new GuardUsageError(
        'requestId',
        `${JSON.stringify(this.requestId)} is already waiting for its verdict`,
      );
    const verdict = this.source.expectVerdict(this.sessionId, this.requestId, eventId);
    // Awaited in `outcome` once the request is acknowledged; a close() of the client may reject
    // it before that, and that rejection reaches the caller there.
    verdict.catch(() => undefined);
    this.verdict = verdict;
    this.waiting.add(this.requestId);
    this.state = 'registered';
  }

  /** The verdict once `sent` (the request's acknowledgement) resolves, within the deadline. */
  async outcome(sent: Promise<unknown>): Promise<Verdict> {
    try {
      return await withTimeout(
        sent.then(() => this.verdict!),
        this.timeoutMs,
        () => this.expire(),
      );
    } finally {
      this.end();
    }
  }

  private expire(): GuardTimeoutError {
    if (this.state === 'registered') this.source.forgetVerdict(this.sessionId, this.requestId);
    this.state = 'expired';
    return this.timedOut();
  }

  /** The outcome is known: the consumer and the session stop waiting (if they ever did). */
  private end(): void {
    if (this.verdict === null) return;
    this.source.forgetVerdict(this.sessionId, this.requestId);
    this.waiting.delete(this.requestId);
  }

  private timedOut(): GuardTimeoutError {
    return new GuardTimeoutError(this.sessionId, this.requestId, this.timeoutMs);
  }
}
