/**
 * Offering one summary: a degenerate one is held back at once; any other is asked about
 * (contract §3 CompactionRequested, the client's spill loop on REFUSE/SPILL) and committed only
 * on APPROVE. Everything else keeps the history as it is and tells `onRefusal` why.
 */
import type { Span, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import { GuardTimeoutError } from '../../client/errors';
import type { GuardedSession, TranscriptReader } from '../../client/session';
import type { SpillStore } from '../../client/spill';
import {
  type CompactionCounts,
  CompactionRefusedError,
  type GuardRefusal,
  type OnRefusal,
} from './refusal';
import { degenerateSummary, type MinSummaryTokens, minTokensFor } from './summaryCheck';

export interface SummaryOffer {
  session: GuardedSession;
  requestId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  occupancyTokens: number;
  /** The summary's text without prefix, and what its summarizer threw (null: nothing). */
  summary: { text: string; threw: Error | null; tokens: number };
  /** What the summarizer read, in tokens. */
  inputTokens: number;
  minSummaryTokens: MinSummaryTokens | undefined;
  spill: { store: SpillStore; transcript: TranscriptReader };
  timeoutMs: number | undefined;
  onVerdict: ((v: Verdict) => void) | undefined;
  onRefusal: OnRefusal | undefined;
  counts: CompactionCounts;
}

/** True when the summary was approved and its commit reported; false when held back. */
export async function offerSummary(o: SummaryOffer): Promise<boolean> {
  const base = {
    sessionId: o.session.sessionId,
    summaryInput: o.summaryInput,
    tailStart: o.tailStart,
    unit: o.unit,
    summary: o.summary.text,
  };
  const degenerate = degenerateSummary({
    text: o.summary.text,
    threw: o.summary.threw !== null,
    summaryTokens: o.summary.tokens,
    minTokens: minTokensFor(o.minSummaryTokens, o.inputTokens),
  });
  if (degenerate) {
    await refuse(o, {
      ...base,
      reason: degenerate,
      requestId: null,
      verdict: null,
      error: o.summary.threw,
    });
    return false;
  }
  const request = {
    requestId: o.requestId,
    unit: o.unit,
    summaryInput: o.summaryInput,
    tailStart: o.tailStart,
  };
  let verdict: Verdict | null = null;
  let error: Error | null = null;
  try {
    verdict = await o.session.requestCompaction(
      { ...request, occupancyTokens: o.occupancyTokens },
      {
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        ...(o.onVerdict ? { onVerdict: o.onVerdict } : {}),
        spill: o.spill,
      },
    );
  } catch (e) {
    if (!(e instanceof GuardTimeoutError)) throw e;
    error = e;
  }
  if (verdict?.decision !== 'APPROVE') {
    await refuse(o, {
      ...base,
      reason: verdict ? 'REFUSED' : 'NO_VERDICT',
      requestId: o.requestId,
      verdict,
      error,
    });
    return false;
  }
  await o.session.committed(request);
  o.counts.committed++;
  return true;
}

async function refuse(o: SummaryOffer, r: GuardRefusal): Promise<void> {
  o.counts.refused[r.reason]++;
  if (o.onRefusal === 'throw') throw new CompactionRefusedError(r);
  await o.onRefusal?.(r);
}
