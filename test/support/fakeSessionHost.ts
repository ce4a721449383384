/** A GuardedSession on a fake client: every send acknowledged at once, the verdicts scripted. */
import { GuardedSession } from '../../src/client/session/guardedSession';
import type { SessionPort } from '../../src/client/session/port';
import type { ContextEvent } from '../../src/engine/events';
import type { Verdict } from '../../src/engine/outputs';

/** Session `sessionId` whose host records what it sends and answers each request with `next()`. */
export function sessionOnFakeHost(
  sessionId: string,
  next: () => Verdict,
): { session: GuardedSession; sent: ContextEvent[] } {
  const sent: ContextEvent[] = [];
  const host: SessionPort = {
    send: (e: ContextEvent) => {
      sent.push(e);
      return Promise.resolve();
    },
    signedInBand: (e: ContextEvent) => e,
    verdictTimeoutMs: 5_000,
    expectVerdict: () => Promise.resolve(next()),
    forgetVerdict: () => undefined,
  };
  return { session: new GuardedSession(host, sessionId, null), sent };
}
