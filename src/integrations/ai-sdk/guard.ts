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
import type { GuardedSession } from '../../client/session';
import { GuardedConversation } from '../compaction/conversation';
import { keptPins } from '../compaction/keepPinned';
import type { GuardedSummaryOptions } from '../compaction/options';
import { DEFAULT_KEEP_MESSAGES, policyOf } from '../compaction/policy';
import { CompactionCounts } from '../compaction/refusal';
import { compactionRound } from '../compaction/round';
import { DEFAULT_SUMMARY_PREFIX, withSummaryPrefix } from '../compaction/summaryPrefix';
import { modelMessages } from './adapter';
import {
  approximateTokens,
  defaultPins,
  type PinClassifier,
  tailCutoff,
  type TokenCounter,
} from './messages';
import { readableTranscript, type Summarizer, summarizerOf } from './summarizer';

export { DEFAULT_KEEP_MESSAGES, DEFAULT_SUMMARY_PREFIX };

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
  const policy = policyOf(options.policy ?? {}, {
    floor: () => ({ unit: 'MESSAGES', span: keep }),
    triggerTokens: () => options.triggerTokens,
  });
  const count = options.countTokens ?? approximateTokens;
  const summarize = summarizerOf(options.summarizer, options.summaryInstructions);
  const prefix = options.summaryPrefix ?? DEFAULT_SUMMARY_PREFIX;
  const conversation = new GuardedConversation(
    options.session,
    policy,
    modelMessages,
    options.pins ?? defaultPins,
    keptPins(options.keepPinned),
  );
  const counts = new CompactionCounts();
  const queue = new Serial();

  async function compactNow(messages: ModelMessage[]): Promise<ModelMessage[]> {
    await conversation.follow(messages, count);
    const occupancyTokens = Math.ceil(await count(messages));
    if (occupancyTokens < options.triggerTokens) return messages;
    const ordered = conversation.inPositionOrder(messages);
    const cutoff = tailCutoff(ordered, keep);
    const toSummarize = ordered.slice(0, cutoff);
    // Nothing to summarize but an earlier summary: nothing to gain.
    if (toSummarize.every((m) => conversation.positions.origin(m) < 0)) return messages;
    const shown = await latestWithin(toSummarize, options.summaryInputTokens, count);
    let text = '';
    let threw: Error | null = null;
    try {
      text = await summarize({ messages: shown, text: readableTranscript(shown) });
    } catch (e) {
      threw = e instanceof Error ? e : new Error(String(e));
    }
    const summary: ModelMessage = { role: 'user', content: withSummaryPrefix(prefix, text) };
    const next = await compactionRound(conversation, {
      context: messages,
      ordered,
      cutoff,
      firstShown: cutoff - shown.length,
      occupancyTokens,
      summary: { message: summary, text, threw },
      count,
      options,
      counts,
    });
    return next ?? messages; // held back: kept as they are
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
