/**
 * Guarded compaction for the Vercel AI SDK (`ai` 7.x), which has none of its own: a helper for
 * `prepareStep` (and for a plain `messages` array between calls). It reports each message as a
 * turn; past a token trigger it summarizes all but a verbatim tail, asks compaction-guard first
 * (contract §3 CompactionRequested), and commits only on APPROVE; a REFUSE with action SPILL is
 * answered through the client's spill loop and asked again; HALT or no verdict keeps the
 * messages as they are. Pinned messages are put back verbatim after the summary (keepPinned),
 * and a degenerate summary is never committed.
 */
import type { LanguageModel, ModelMessage } from 'ai';
import type { Policy } from '../../engine/events';
import { Serial } from '../../serial';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { arrangeAfterSummary, keptPins } from '../compaction/keepPinned';
import { offerSummary } from '../compaction/offer';
import type { GuardedSummaryOptions } from '../compaction/options';
import { CompactionCounts } from '../compaction/refusal';
import { TrackedContext } from './context';
import {
  approximateTokens,
  defaultPins,
  type PinClassifier,
  tailCutoff,
  type TokenCounter,
} from './messages';
import { readableTranscript, type Summarizer, summarizerOf } from './summarizer';

/** The prefix of the summary message (langchain's, so both integrations write the same). */
export const DEFAULT_SUMMARY_PREFIX = 'Here is a summary of the conversation to date:';
/** Messages kept verbatim after a summary when none is said (langchain's default too). */
export const DEFAULT_KEEP_MESSAGES = 20;

export interface GuardedCompactionOptions extends GuardedSummaryOptions {
  /** The guard's session of this conversation (opened on first use if it is new). */
  session: GuardedSession;
  /** A model (asked once with `generateText` and a summary prompt) or a function. */
  summarizer: LanguageModel | Summarizer;
  /** Compact when the messages reach this many tokens. */
  triggerTokens: number;
  /** Messages kept verbatim after the summary (the floor); default 20. */
  keepMessages?: number;
  /**
   * The most the summarizer is shown, in tokens: the latest whole messages before the tail that
   * fit. Default: all of them. The guard is told exactly what was shown.
   */
  summaryInputTokens?: number;
  /** Token counter; default about four characters a token. */
  countTokens?: TokenCounter;
  /** The policy sent in SessionOpened; default: floor = keepMessages in MESSAGES, STRICT, spills on. */
  policy?: Partial<Policy>;
  /** Pins per message; default `defaultPins`. */
  pins?: PinClassifier;
  /** Instructions for the default summarizer call. */
  summaryInstructions?: string;
  /** Put before the summary in its message; default DEFAULT_SUMMARY_PREFIX. */
  summaryPrefix?: string;
}

export interface GuardedCompaction {
  /** For `generateText`/`streamText`/`ToolLoopAgent`: `prepareStep: guard.prepareStep`. */
  prepareStep: (step: {
    messages: ModelMessage[];
  }) => Promise<{ messages: ModelMessage[] } | undefined>;
  /** Between calls: the messages to send next (the same array when nothing was compacted). */
  compact: (messages: ModelMessage[]) => Promise<ModelMessage[]>;
  /** This conversation's compactions: committed, pinned kept, held back by reason. */
  readonly counts: CompactionCounts;
}

function defaultPolicy(o: GuardedCompactionOptions, keep: number): Policy {
  const given = o.policy ?? {};
  const windowTokens = given.windowTokens ?? 128_000;
  const floor = given.floor ?? { unit: 'MESSAGES' as const, span: keep };
  return {
    windowTokens,
    triggerTokens: given.triggerTokens ?? o.triggerTokens,
    ceilingTokens: given.ceilingTokens ?? windowTokens,
    floor,
    truncatorUnit: given.truncatorUnit ?? floor.unit,
    coverage: given.coverage ?? 'STRICT',
    spill: given.spill ?? 'ENABLED',
  };
}

/** The latest whole messages of `messages` whose tokens fit `limit` (all of them without one). */
async function latestWithin(
  messages: ModelMessage[],
  limit: number | undefined,
  count: TokenCounter,
): Promise<ModelMessage[]> {
  if (limit === undefined) return messages;
  let first = messages.length;
  while (first > 0 && (await count(messages.slice(first - 1))) <= limit) first--;
  return messages.slice(first);
}

/** One helper per conversation (one session). */
export function guardedCompaction(options: GuardedCompactionOptions): GuardedCompaction {
  const keep = options.keepMessages ?? DEFAULT_KEEP_MESSAGES;
  const policy = defaultPolicy(options, keep);
  const unit = policy.floor.unit;
  const count = options.countTokens ?? approximateTokens;
  const summarize = summarizerOf(options.summarizer, options.summaryInstructions);
  const prefix = options.summaryPrefix ?? DEFAULT_SUMMARY_PREFIX;
  const context = new TrackedContext(
    options.session,
    policy,
    options.pins ?? defaultPins,
    keptPins(options.keepPinned),
  );
  const { session, positions } = context;
  const counts = new CompactionCounts();
  const queue = new Serial();

  async function compactNow(messages: ModelMessage[]): Promise<ModelMessage[]> {
    await context.follow(messages, count);
    const occupancyTokens = Math.ceil(await count(messages));
    if (occupancyTokens < options.triggerTokens) return messages;
    const ordered = positions.inPositionOrder(messages, (m) => m);
    const cutoff = tailCutoff(ordered, keep);
    const toSummarize = ordered.slice(0, cutoff);
    // Nothing to summarize but an earlier summary: nothing to gain.
    if (toSummarize.every((m) => positions.origin(m) < 0)) return messages;
    const preserved = ordered.slice(cutoff);
    const tailStart = preserved[0] ? context.span(preserved[0]).start : session.head(unit);
    const shown = await latestWithin(toSummarize, options.summaryInputTokens, count);
    const summaryInput = {
      start: shown[0] ? context.span(shown[0]).start : tailStart,
      end: tailStart,
    };
    let text = '';
    let threw: Error | null = null;
    try {
      text = await summarize({ messages: shown, text: readableTranscript(shown) });
    } catch (e) {
      threw = e instanceof Error ? e : new Error(String(e));
    }
    const summary: ModelMessage = { role: 'user', content: `${prefix}\n\n${text.trim()}` };
    const approved = await offerSummary({
      session,
      unit,
      summaryInput,
      tailStart,
      occupancyTokens,
      summary: { text, threw },
      countText: (t) => count([{ role: 'user', content: t }]),
      inputTokens: shown.length > 0 ? Math.ceil(await count(shown)) : 0,
      transcript: (r: TranscriptRange) => context.lines(r),
      options,
      counts,
    });
    if (!approved) return messages; // kept as they are
    const kept = new Set(preserved);
    const { block, rest, copies } = arrangeAfterSummary({
      summarized: toSummarize,
      preserved: messages.filter((m) => kept.has(m)),
      pinned: (m) => positions.pinned(m),
      inBlock: (m) => positions.inBlock(m),
      origin: (m) => positions.origin(m),
      copy: (m) => ({ ...m }),
    });
    const next = [summary, ...block, ...rest];
    await context.compacted(next, preserved, tailStart, copies, count);
    counts.pinnedKept += copies.length;
    return next;
  }

  /** One compaction at a time: a conversation's calls are serialised. */
  const compact = (messages: ModelMessage[]): Promise<ModelMessage[]> =>
    queue.run(() => compactNow(messages));

  return {
    counts,
    compact,
    prepareStep: async ({ messages }) => {
      const next = await compact(messages);
      return next === messages ? undefined : { messages: next };
    },
  };
}
