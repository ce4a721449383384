/** Collects one input event's outputs in contract §6 order: audit records, verdict, spill request. */
import type { Unit } from './events';
import {
  AUDIT_KIND_OF,
  type AuditCode,
  type AuditRecord,
  type SpillRequest,
  type Verdict,
} from './outputs';
import { type IntervalSet, reportedSpans } from './intervals';

export type Output =
  | { record: 'audit'; value: AuditRecord }
  | { record: 'verdict'; value: Verdict }
  | { record: 'spill-request'; value: SpillRequest };

/** What the engine noticed that is counted in metrics, not audited (contract §6). */
export type Note =
  | 'duplicate'
  | 'ignored'
  | 'gap'
  | 'conflict'
  | 'state-dropped'
  | 'stored-verdict'
  | 'unauthorized'
  | 'coarsened';

const NO_OUTPUTS: readonly Output[] = Object.freeze([]) as readonly Output[];
const NO_NOTES: readonly Note[] = Object.freeze([]) as readonly Note[];

/** Arrays are created on first use: most events (turns) produce nothing. */
export class Collector {
  private auditList: AuditRecord[] | null = null;
  private noteList: Note[] | null = null;
  verdict: Verdict | null = null;
  spillRequest: SpillRequest | null = null;

  constructor(
    private readonly sessionId: string,
    /** null for an out-of-band event (contract §4 step 0). */
    private readonly inputSeq: number | null,
    private readonly occurredAt: number,
    private readonly requestId: string | null,
  ) {}

  /** An audit record; its kind (advisory or violation) is the code's (contract §6). */
  audit(code: AuditCode, message: string, unit: Unit | null, ranges: IntervalSet): void {
    (this.auditList ??= []).push({
      kind: AUDIT_KIND_OF[code],
      code,
      sessionId: this.sessionId,
      message,
      inputSeq: this.inputSeq,
      requestId: this.requestId,
      ranges: unit === null ? [] : reportedSpans(ranges).map((r) => ({ unit, ...r })),
      occurredAt: this.occurredAt,
    });
  }

  note(n: Note): void {
    const list = (this.noteList ??= []);
    if (!list.includes(n)) list.push(n);
  }

  get notes(): readonly Note[] {
    return this.noteList ?? NO_NOTES;
  }

  outputs(): readonly Output[] {
    if (this.auditList === null && this.verdict === null && this.spillRequest === null)
      return NO_OUTPUTS;
    const out: Output[] = (this.auditList ?? []).map((value) => ({
      record: 'audit' as const,
      value,
    }));
    if (this.verdict) out.push({ record: 'verdict', value: this.verdict });
    if (this.spillRequest) out.push({ record: 'spill-request', value: this.spillRequest });
    return out;
  }
}
