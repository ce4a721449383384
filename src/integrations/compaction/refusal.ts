/**
 * What the integrations tell the caller when a summary is held back, and what they count. Both
 * the LangChain and the AI SDK integration use these, so a fleet counts the same things.
 */
import type { Span, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import { verdictHoles } from '../../client/spillAnswerCheck';
import type { DegenerateReason } from './summaryCheck';

/**
 * Why the history was kept as it was: the guard halted (`HALTED`: REFUSE with action HALT, no
 * spill can help, an on-call matter), refused otherwise (`REFUSED`: the spill loop ran out), no
 * verdict came in time (`NO_VERDICT`, fail closed), or the summary itself was degenerate
 * (summaryCheck.ts).
 */
export type RefusalReason = 'HALTED' | 'REFUSED' | 'NO_VERDICT' | DegenerateReason;

export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'HALTED',
  'REFUSED',
  'NO_VERDICT',
  'EMPTY_SUMMARY',
  'ERROR_SUMMARY',
  'SUMMARIZER_THREW',
  'SUMMARY_TOO_SHORT',
];

/** Why a summary was held back; the history is intact. */
export interface GuardRefusal {
  reason: RefusalReason;
  sessionId: string;
  /** The request's id; null when no request was sent (a degenerate summary is never offered). */
  requestId: string | null;
  summaryInput: Span;
  tailStart: number;
  unit: Unit;
  /** The final verdict; null when none came (then `error` says why) or none was asked for. */
  verdict: Verdict | null;
  /** The timeout, or what the summarizer threw. */
  error: Error | null;
  /** The summary that was held back (its text without prefix). */
  summary: string | null;
}

/** A one-line account of a refusal, for logs and errors. */
export function describeRefusal(r: GuardRefusal): string {
  switch (r.reason) {
    case 'HALTED':
      return `compaction-guard halted the session, so the summary was not applied: ${r.verdict?.diagnostic ?? ''}`;
    case 'REFUSED':
      return `compaction-guard refused the summary (${r.verdict?.action ?? ''}): ${r.verdict?.diagnostic ?? ''}`;
    case 'NO_VERDICT':
      return `no verdict for the summary, so it was not applied: ${r.error?.message ?? ''}`;
    case 'SUMMARIZER_THREW':
      return `the summarizer failed, so its output was not applied: ${r.error?.message ?? ''}`;
    case 'EMPTY_SUMMARY':
      return 'the summary was empty, so it was not applied';
    case 'ERROR_SUMMARY':
      return `the summary is an error text, so it was not applied: ${JSON.stringify(r.summary?.slice(0, 120))}`;
    case 'SUMMARY_TOO_SHORT':
      return `the summary is too short for what it replaces, so it was not applied: ${JSON.stringify(r.summary?.slice(0, 120))}`;
  }
}

/** Client-side counts of one integration's compactions (logs, metrics, an example's output). */
export class CompactionCounts {
  /** Summaries committed (APPROVE, then CompactionCommitted). */
  committed = 0;
  /** Pinned messages put back verbatim after a committed summary. */
  pinnedKept = 0;
  /** Summaries held back, by reason. */
  readonly refused: Record<RefusalReason, number> = Object.fromEntries(
    REFUSAL_REASONS.map((r) => [r, 0]),
  ) as Record<RefusalReason, number>;

  /** Summaries held back because they were degenerate (never offered to the guard). */
  get degenerate(): number {
    return (
      this.refused.EMPTY_SUMMARY +
      this.refused.ERROR_SUMMARY +
      this.refused.SUMMARIZER_THREW +
      this.refused.SUMMARY_TOO_SHORT
    );
  }

  toJSON(): { committed: number; pinnedKept: number; refused: Record<RefusalReason, number> } {
    return { committed: this.committed, pinnedKept: this.pinnedKept, refused: { ...this.refused } };
  }
}

/** A held-back summary: a callback (the run goes on, history intact), or 'throw'. */
export type OnRefusal = ((refusal: GuardRefusal) => void | Promise<void>) | 'throw';

/** The reason a verdict other than APPROVE gives (null: no verdict came). */
export function verdictReason(verdict: Verdict | null): 'HALTED' | 'REFUSED' | 'NO_VERDICT' {
  if (verdict === null) return 'NO_VERDICT';
  return verdict.action === 'HALT' ? 'HALTED' : 'REFUSED';
}

/**
 * What on-call is told of a HALT: the verdict's diagnostic (which names the evicted range), and
 * how to look and write the loss off (docs/operations.md, "On call").
 */
export function haltWarning(r: GuardRefusal): string {
  return [
    ...haltLines(r),
    '(docs/operations.md, "On call"; pass onRefusal to handle this yourself.)',
  ].join('\n');
}

/** haltWarning without its last line (for a caller with no `onRefusal`: the Claude Code hook). */
export function haltLines(r: GuardRefusal): string[] {
  const holes = r.verdict ? verdictHoles(r.verdict) : [];
  const range = holes.length
    ? `${Math.min(...holes.map((h) => h.start))}-${Math.max(...holes.map((h) => h.end))}`
    : 'START-END';
  const unit = holes[0]?.unit ?? r.unit;
  return [
    `compaction-guard HALT, session ${r.sessionId} (request ${r.requestId ?? '-'}): ${r.verdict?.diagnostic ?? ''}`,
    'The history is kept as it is; no spill can help, so this session compacts again only once on call acts:',
    `  npx compaction-guard inspect ${r.sessionId}    # names the lost range and why`,
    `  npx compaction-guard acknowledge --session ${r.sessionId} --unit ${unit} --range ${range} --key <a key with role ACKNOWLEDGE> --reason "..."    # if the loss is acceptable, writes it off`,
  ];
}

/** The default `onRefusal`: a HALT is warned of once, with its diagnostic; the rest is counted only. */
export function warnOnHalt(r: GuardRefusal): void {
  if (r.reason === 'HALTED') console.warn(haltWarning(r));
}
