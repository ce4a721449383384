/**
 * One compaction of a followed conversation, once its framework has cut the context and written
 * the summary: the guard is asked (offer.ts) with exactly what the summarizer was shown and what
 * stays verbatim; on APPROVE the context becomes `[summary, ...pinned copies, ...rest]`
 * (keepPinned.ts), the copies are reported as new turns and counted.
 */
import type { TokenCounter } from './adapter';
import type { GuardedConversation } from './conversation';
import { arrangeAfterSummary } from './keepPinned';
import { offerSummary } from './offer';
import type { GuardedSummaryOptions } from './options';
import type { CompactionCounts } from './refusal';

export interface CompactionRound<M> {
  /** The context as the model sees it. */
  context: readonly M[];
  /** The same messages in position order (GuardedConversation.inPositionOrder). */
  ordered: readonly M[];
  /** Where the verbatim tail starts in `ordered`; before it, what the summary replaces. */
  cutoff: number;
  /** The first message of `ordered` the summarizer was shown (`cutoff`: none). */
  firstShown: number;
  /** The context's size in tokens. */
  occupancyTokens: number;
  /** The summary message, its own text (without prefix), and what its summarizer threw. */
  summary: { message: M; text: string; threw: Error | null };
  count: TokenCounter<M>;
  options: GuardedSummaryOptions;
  counts: CompactionCounts;
}

/** The context after the summary (summary first), or null when it was held back. */
export async function compactionRound<M, K>(
  conversation: GuardedConversation<M, K>,
  r: CompactionRound<M>,
): Promise<M[] | null> {
  const { session, positions, adapter } = conversation;
  const key = (m: M) => adapter.key(m);
  const toSummarize = r.ordered.slice(0, r.cutoff);
  const preserved = r.ordered.slice(r.cutoff);
  const shown = toSummarize.slice(r.firstShown);
  const tailStart = preserved[0]
    ? conversation.span(preserved[0]).start
    : session.head(positions.unit);
  const approved = await offerSummary({
    session,
    unit: positions.unit,
    summaryInput: {
      start: shown[0] ? conversation.span(shown[0]).start : tailStart,
      end: tailStart,
    },
    tailStart,
    occupancyTokens: r.occupancyTokens,
    summary: { text: r.summary.text, threw: r.summary.threw },
    countText: (t) => r.count([adapter.textMessage(t)]),
    inputTokens: shown.length > 0 ? Math.ceil(await r.count(shown)) : 0,
    transcript: (range) => conversation.lines(range),
    options: r.options,
    counts: r.counts,
  });
  if (!approved) return null;
  const kept = new Set(preserved.map(key));
  const { block, rest, copies } = arrangeAfterSummary({
    summarized: toSummarize,
    preserved: r.context.filter((m) => kept.has(key(m))),
    pinned: (m) => positions.pinned(key(m)),
    inBlock: (m) => positions.inBlock(key(m)),
    origin: (m) => positions.origin(key(m)),
    copy: (m) => adapter.copy(m),
  });
  const next = [r.summary.message, ...block, ...rest];
  await conversation.compacted(next, preserved, tailStart, copies, r.count);
  r.counts.pinnedKept += copies.length;
  return next;
}
