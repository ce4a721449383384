/**
 * The last few full verdicts per session, in memory only, for `/sessions/{id}` ("why was this
 * session refused?"). Bounded: at most `perSession` verdicts for the `sessions` most recently
 * decided sessions. The changelog keeps compact verdicts only, so after a restart this starts
 * empty and the view falls back to the stored verdicts' decisions.
 */
import type { Output } from '../engine/collector';
import type { Verdict } from '../engine/outputs';
import type { ProcessorObserver } from '../kafka/processorObserver';

export class RecentVerdicts implements ProcessorObserver {
  private readonly bySession = new Map<string, Verdict[]>();

  constructor(
    private readonly sessions = 10_000,
    private readonly perSession = 5,
  ) {}

  output(o: Output): void {
    if (o.record !== 'verdict') return;
    const id = o.value.sessionId;
    const list = this.bySession.get(id) ?? [];
    this.bySession.delete(id);
    list.push(o.value);
    if (list.length > this.perSession) list.shift();
    this.bySession.set(id, list);
    if (this.bySession.size > this.sessions) {
      const oldest = this.bySession.keys().next().value;
      if (oldest !== undefined) this.bySession.delete(oldest);
    }
  }

  get(sessionId: string): readonly Verdict[] {
    return this.bySession.get(sessionId) ?? [];
  }
}
