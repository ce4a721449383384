/**
 * Offering one summary: a degenerate one is held back at once; any other is asked about
 * (contract §3 CompactionRequested, the client's spill loop on REFUSE/SPILL) and committed only
 * on APPROVE. Everything else keeps the history as it is and tells `onRefusal` why.
 */
import { randomUUID } from 'node:crypto';
import type { Span, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import { GuardTimeoutError } from '../../client/errors';
import type { GuardedSession, TranscriptReader } from '../../client/session';
import type { GuardedSummaryOptions } from './options';
import { CompactionRefusedError } from './refusedError';
import { type CompactionCounts, type GuardRefusal, verdictReason, warnOnHalt } from './refusal';
import { degenerateSummary, minTokensFor } from './summaryCheck';

export interface SummaryOffer {
  session: GuardedSession;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  occupancyTokens: number;
  /** The summary's text without prefix, and what its summarizer threw (null: nothing). */
  summary: { text: string; threw: Error | null };
  /** The size of a text in tokens, counted as the integration counts messages. */
  countText: (text: string) => number | Promise<number>;
  /** What the summarizer read, in tokens. */
  inputTokens: number;
  /** Reads the conversation's transcript for a spill. */
  transcript: TranscriptReader;
  /** The integration's options (spill store, minimum, timeout, callbacks). */
  options: GuardedSummaryOptions;
  counts: CompactionCounts;
}

/** True when the summary was approved and its commit reported; false when held back. */
export async function offerSummary(o: SummaryOffer): Promise<boolean> {
  const trimmed = o.summary.text.trim();
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
    summaryTokens: trimmed ? Math.ceil(await o.countText(trimmed)) : 0,
    minTokens: minTokensFor(o.options.minSummaryTokens, o.inputTokens),
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
    requestId: `summary-${randomUUID()}`,
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
        ...(o.options.timeoutMs !== undefined ? { timeoutMs: o.options.timeoutMs } : {}),
        ...(o.options.onVerdict ? { onVerdict: o.options.onVerdict } : {}),
        spill: { store: o.options.spill, transcript: o.transcript },
      },
    );
  } catch (e) {
    if (!(e instanceof GuardTimeoutError)) throw e;
    error = e;
  }
  if (verdict?.decision !== 'APPROVE') {
    await refuse(o, {
      ...base,
      reason: verdictReason(verdict),
      requestId: request.requestId,
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
  const onRefusal = o.options.onRefusal ?? warnOnHalt;
  if (onRefusal === 'throw') throw new CompactionRefusedError(r);
  await onRefusal(r);
}
