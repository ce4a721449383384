/**
 * The last few full verdicts and violations per session, in memory only, for `/sessions/{id}`
 * ("why was this session refused?"). Bounded: at most `perSession` of each for the `sessions`
 * most recently decided (or audited) sessions. The changelog keeps compact verdicts only, so after a restart this starts
 * empty and the view falls back to the stored verdicts' decisions.
 */
import type { Output } from '../engine/collector';
import type { AuditRecord, Verdict } from '../engine/outputs';
import type { ProcessorObserver } from '../kafka/processorObserver';

export class RecentVerdicts implements ProcessorObserver {
  private readonly bySession = new Map<string, Verdict[]>();
  private readonly violationsBySession = new Map<string, AuditRecord[]>();

  constructor(
    private readonly sessions = 10_000,
    private readonly perSession = 5,
  ) {}

  output(o: Output): void {
    if (o.record === 'verdict') this.keep(this.bySession, o.value.sessionId, o.value);
    // Violations too (an UNAUTHORIZED_EVENT says which authority check failed, contract §4b).
    else if (o.record === 'audit' && o.value.kind === 'VIOLATION')
      this.keep(this.violationsBySession, o.value.sessionId, o.value);
  }

  get(sessionId: string): readonly Verdict[] {
    return this.bySession.get(sessionId) ?? [];
  }

  /** The session's last few VIOLATION audit records. */
  violations(sessionId: string): readonly AuditRecord[] {
    return this.violationsBySession.get(sessionId) ?? [];
  }

  /** Appends to the session's list (at most perSession), the session most recent of at most `sessions`. */
  private keep<T>(map: Map<string, T[]>, id: string, value: T): void {
    const list = map.get(id) ?? [];
    map.delete(id);
    list.push(value);
    if (list.length > this.perSession) list.shift();
    map.set(id, list);
    if (map.size > this.sessions) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
  }
}
