/** Collects one input event's outputs in DESIGN §6 order: audit records, verdict, spill request. */
import type { Unit } from './events';
import type { AuditCode, AuditKind, AuditRecord, SpillRequest, Verdict } from './outputs';
import { type IntervalSet, toSpans } from './intervals';

export type Output =
  | { record: 'audit'; value: AuditRecord }
  | { record: 'verdict'; value: Verdict }
  | { record: 'spill-request'; value: SpillRequest };

/** What the engine noticed that is counted in metrics, not audited (DESIGN §6). */
export type Note = 'duplicate' | 'ignored' | 'gap' | 'conflict' | 'state-dropped' | 'stored-verdict';

export class Collector {
  readonly audits: AuditRecord[] = [];
  verdict: Verdict | null = null;
  spillRequest: SpillRequest | null = null;
  readonly notes: Note[] = [];

  constructor(
    private readonly sessionId: string,
    private readonly inputSeq: number,
    private readonly occurredAt: number,
    private readonly requestId: string | null,
  ) {}

  audit(kind: AuditKind, code: AuditCode, message: string, unit: Unit | null, ranges: IntervalSet): void {
    this.audits.push({
      kind,
      code,
      sessionId: this.sessionId,
      message,
      inputSeq: this.inputSeq,
      requestId: this.requestId,
      ranges: unit === null ? [] : toSpans(ranges).map((r) => ({ unit, ...r })),
      occurredAt: this.occurredAt,
    });
  }

  note(n: Note): void {
    if (!this.notes.includes(n)) this.notes.push(n);
  }

  outputs(): Output[] {
    const out: Output[] = this.audits.map((value) => ({ record: 'audit' as const, value }));
    if (this.verdict) out.push({ record: 'verdict', value: this.verdict });
    if (this.spillRequest) out.push({ record: 'spill-request', value: this.spillRequest });
    return out;
  }
}
