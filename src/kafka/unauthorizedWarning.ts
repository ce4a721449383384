/**
 * The processor's side of an unsigned or untrusted SpillCompleted, SpillFailed or
 * LossAcknowledged (contract §4b): each is an UNAUTHORIZED_EVENT audit record, which only the
 * audit topic's readers see. The operator of the processor learns it from the log too, in one
 * warn line naming the producer-side fix, at most once per interval (a client without a key
 * answers every spill unsigned: one line per record would drown the log), with the count since
 * the last line and one record's message as the example (docs/decisions.md 171).
 */
import type { Logger } from 'pino';
import type { Output } from '../engine/collector';
import type { ProcessorObserver } from './processorObserver';

/** At most one warn line per minute. */
export const UNAUTHORIZED_WARNING_INTERVAL_MS = 60_000;

/** The warn line: how many were not applied, one example, and what their producer must do. */
export function unauthorizedWarningLine(count: number, example: string): string {
  return (
    `${count} signed-type event${count === 1 ? '' : 's'} not applied (UNAUTHORIZED_EVENT), e.g. ${example}. ` +
    "Their producer must sign them with a key of this processor's ring (CG_TRUSTED_KEYS_FILE): " +
    "a spill answer with CG_SIGNING_KEY_FILE or the client's signingKey option (role SPILL), " +
    '`compaction-guard acknowledge --key` for a write-off (role ACKNOWLEDGE)'
  );
}

export class UnauthorizedEventWarning implements ProcessorObserver {
  /** Records since the last line. */
  private count = 0;
  private lastLineAt: number | null = null;

  constructor(
    private readonly log: Pick<Logger, 'warn'>,
    private readonly intervalMs = UNAUTHORIZED_WARNING_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  output(o: Output): void {
    if (o.record !== 'audit' || o.value.code !== 'UNAUTHORIZED_EVENT') return;
    this.count++;
    const now = this.now();
    if (this.lastLineAt !== null && now - this.lastLineAt < this.intervalMs) return;
    this.log.warn(
      { sessionId: o.value.sessionId, notApplied: this.count },
      unauthorizedWarningLine(this.count, `session ${o.value.sessionId}: ${o.value.message}`),
    );
    this.lastLineAt = now;
    this.count = 0;
  }
}
