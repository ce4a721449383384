/**
 * What a session needs of its client, and all it gets: GuardClient hands each session it makes
 * one of these (`GuardClient.sessionPort`), so the session knows nothing else of the client and
 * a test gives it a fake (test/unit/spill-vouch.test.ts, "the client's spill loop").
 */
import type { ContextEvent } from '../../engine/events';
import type { VerdictSource } from './verdictWait';

export interface SessionPort extends VerdictSource {
  /** The wait for a verdict (ms) when a request names none. */
  readonly verdictTimeoutMs: number;
  /** Sends one event (key = sessionId); resolves when the broker acknowledged it. */
  send(event: ContextEvent): Promise<void>;
  /**
   * The event signed by the client's key when it is one of the three (contract §4b), else as
   * given; `lastEventAt`: the latest occurredAt the session has sent.
   */
  signedInBand(event: ContextEvent, lastEventAt: number | null): ContextEvent;
}
