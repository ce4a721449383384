/** The readable report of `audit` without `--json` (contract §7). */
import type { AuditLineRecord } from './replay';
import { printable } from '../cli/printable';

export class ReportBuilder {
  private readonly decisions = new Map<string, number>();
  private readonly reasons = new Map<string, number>();
  private readonly auditCodes = new Map<string, number>();
  private readonly halted = new Map<string, string>();
  private readonly refusals: string[] = [];
  private deadLetters = 0;
  private spillRequests = 0;
  private readonly deadLines: string[] = [];

  add(r: AuditLineRecord): void {
    switch (r.record) {
      case 'verdict': {
        bump(this.decisions, `${r.decision}${r.action === 'NONE' ? '' : ` (${r.action})`}`);
        for (const reason of r.reasons) bump(this.reasons, reason.code);
        if (r.decision === 'REFUSE') {
          const holes = r.reasons
            .map(
              (x) =>
                `${x.code} ${x.holes.map((h) => `${h.unit}[${h.start},${h.end})`).join(' ') || '(no hole)'}`,
            )
            .join('; ');
          this.refusals.push(
            `  ${r.sessionId} ${r.requestId} seq ${r.inputSeq} ${r.action}: ${holes}`,
          );
        }
        if (r.action === 'HALT') this.halted.set(r.sessionId, r.diagnostic ?? '');
        else if (r.decision === 'APPROVE') this.halted.delete(r.sessionId);
        break;
      }
      case 'spill-request':
        this.spillRequests++;
        break;
      case 'audit':
        bump(this.auditCodes, `${r.kind} ${r.code}`);
        break;
      case 'dead-letter':
        this.deadLetters++;
        if (this.deadLines.length < 20) this.deadLines.push(`  line ${r.lineNumber}: ${r.error}`);
        break;
    }
  }

  render(): string {
    const out: string[] = ['compaction-guard audit report', ''];
    out.push('Verdicts by decision:', ...table(this.decisions), '');
    out.push('Refusal reasons:', ...table(this.reasons), '');
    out.push(`Spill requests: ${this.spillRequests}`, '');
    out.push('Advisories and violations:', ...table(this.auditCodes), '');
    out.push(`Sessions halted (last verdict HALT): ${this.halted.size}`);
    for (const [session, why] of this.halted) out.push(`  ${session}: ${why}`);
    out.push('', `Refusals and their holes (${this.refusals.length}):`, ...this.refusals);
    out.push('', `Dead letters: ${this.deadLetters}`, ...this.deadLines);
    if (this.deadLetters > this.deadLines.length)
      out.push(`  … ${this.deadLetters - this.deadLines.length} more`);
    // Every line may quote input: shown, never executed by the terminal.
    return out.map(printable).join('\n') + '\n';
  }
}

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function table(m: Map<string, number>): string[] {
  if (m.size === 0) return ['  (none)'];
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, v]) => `  ${k}: ${v}`);
}
