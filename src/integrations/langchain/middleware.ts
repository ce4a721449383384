/**
 * A guard around langchain's own summarization middleware (langchain v1 `createAgent`). Before a
 * summary replaces the history it asks compaction-guard (contract §3 CompactionRequested) with
 * what the summarizer really saw (after `trimTokensToSummarize`) and what stays verbatim, and
 * lets the summary through only on APPROVE; a REFUSE with action SPILL is answered by spilling
 * the full history and asking again; anything else keeps the history intact and is surfaced.
 */
import { type BaseMessage, HumanMessage, trimMessages } from '@langchain/core/messages';
import {
  countTokensApproximately,
  createMiddleware,
  summarizationMiddleware,
  type SummarizationMiddlewareConfig,
} from 'langchain';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Policy } from '../../engine/events';
import { GuardUsageError } from '../../client/errors';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { arrangeAfterSummary, keptPins } from '../compaction/keepPinned';
import { offerSummary } from '../compaction/offer';
import type { GuardedSummaryOptions } from '../compaction/options';
import { CompactionCounts } from '../compaction/refusal';
import { Conversation, type TokenCounter, verbatimCopy } from './conversation';
import { defaultPins, type PinClassifier, textOf } from './pins';

/**
 * langchain's `trimTokensToSummarize` when none is given (DEFAULT_TRIM_TOKEN_LIMIT in
 * langchain/src/agents/middleware/summarization.ts, not exported).
 */
export const LANGCHAIN_DEFAULT_TRIM_TOKENS = 4000;
/** langchain's default `keep: { messages: 20 }`. */
const LANGCHAIN_DEFAULT_KEEP_MESSAGES = 20;
/** langchain's summary prefix when none is given (DEFAULT_SUMMARY_PREFIX, not exported). */
export const LANGCHAIN_DEFAULT_SUMMARY_PREFIX = 'Here is a summary of the conversation to date:';

export interface GuardedSummarizationOptions extends GuardedSummaryOptions {
  /** langchain's summarization options, passed to its `summarizationMiddleware` unchanged. */
  summarization: SummarizationMiddlewareConfig;
  /**
   * The guard's session of the conversation (opened on first use if it is new): one session, or
   * a function of the run (e.g. `(rt) => sessions.get(rt.configurable?.thread_id)`) returning
   * the same GuardedSession object for every run of one thread, for an agent serving many.
   */
  session: GuardedSession | ((runtime: GuardRuntime) => GuardedSession);
  /**
   * The policy sent in SessionOpened. Default: floor = langchain's `keep` (messages, or tokens)
   * in that unit, truncator in the same unit, STRICT coverage, spills enabled.
   */
  policy?: Partial<Policy>;
  /** Pins per message; default `defaultPins` (pins.ts). */
  pins?: PinClassifier;
}

/** What the middleware reads of langchain's runtime. */
export interface GuardRuntime {
  context?: { tokenCounter?: TokenCounter; trimTokensToSummarize?: number };
  /** LangGraph's run configuration: `thread_id` names the conversation. */
  configurable?: { thread_id?: string; [key: string]: unknown };
}
type Runtime = GuardRuntime;
interface State {
  messages: BaseMessage[];
}
type Hook = (state: State, runtime: Runtime) => Promise<unknown>;

function defaultPolicy(c: SummarizationMiddlewareConfig, given: Partial<Policy> = {}): Policy {
  const keep = c.keep as { messages?: number; tokens?: number; fraction?: number } | undefined;
  let floor: Policy['floor'];
  if (keep?.tokens !== undefined) floor = { unit: 'TOKENS', span: Math.floor(keep.tokens) };
  else if (keep?.fraction !== undefined && given.floor === undefined)
    throw new GuardUsageError(
      'policy.floor',
      'langchain keep is a fraction of the model context: give the floor explicitly',
    );
  else floor = { unit: 'MESSAGES', span: keep?.messages ?? LANGCHAIN_DEFAULT_KEEP_MESSAGES };
  const trigger = Array.isArray(c.trigger)
    ? undefined
    : (c.trigger as { tokens?: number } | undefined);
  const windowTokens = given.windowTokens ?? 128_000;
  return {
    windowTokens,
    triggerTokens: given.triggerTokens ?? trigger?.tokens ?? Math.floor(windowTokens * 0.8),
    ceilingTokens: given.ceilingTokens ?? windowTokens,
    floor: given.floor ?? floor,
    truncatorUnit: given.truncatorUnit ?? (given.floor ?? floor).unit,
    coverage: given.coverage ?? 'STRICT',
    spill: given.spill ?? 'ENABLED',
  };
}

/** What the wrapped summarizer model threw during one hook call (langchain catches it). */
const summarizerCall = new AsyncLocalStorage<{ threw: Error | null }>();

/**
 * The summarization model, watched: langchain catches what its `invoke` throws and returns
 * "Error generating summary: …" as the summary; the throw itself is recorded here, so any text
 * that came out of a failed call is held back (a model given by name cannot be watched; its
 * error text still is recognised).
 */
function watched<M>(model: M): M {
  if (typeof model !== 'object' || model === null) return model;
  const invoke = (model as { invoke?: unknown }).invoke;
  if (typeof invoke !== 'function') return model;
  return new Proxy(model, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== 'invoke' || typeof value !== 'function') return value;
      return async function (this: unknown, ...args: unknown[]) {
        try {
          return (await (value as (...a: unknown[]) => Promise<unknown>).apply(
            this,
            args,
          )) as unknown;
        } catch (e) {
          const call = summarizerCall.getStore();
          if (call) call.threw = e instanceof Error ? e : new Error(String(e));
          throw e;
        }
      };
    },
  });
}

/** The summary's own text: langchain writes `${summaryPrefix}\n\n${summary}`. */
function summaryText(summary: BaseMessage, prefix: string): string {
  const text = textOf(summary);
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

/**
 * Use in place of `summarizationMiddleware(options.summarization)` in `createAgent`'s
 * `middleware`. It follows each session's messages (one session, or one per thread). Its
 * `counts` are this middleware's compactions: committed, pinned messages kept, and the summaries
 * held back by reason.
 */
export function guardedSummarization(options: GuardedSummarizationOptions) {
  const inner = summarizationMiddleware({
    ...options.summarization,
    model: watched(options.summarization.model),
  });
  const innerHook = (typeof inner.beforeModel === 'function'
    ? inner.beforeModel
    : (inner.beforeModel as { hook: unknown } | undefined)?.hook) as unknown as Hook;
  const policy = defaultPolicy(options.summarization, options.policy);
  const unit = policy.floor.unit;
  const classify = options.pins ?? defaultPins;
  const kept = keptPins(options.keepPinned);
  const counts = new CompactionCounts();
  const conversations = new WeakMap<GuardedSession, Conversation>();
  const conversationOf = (runtime: Runtime): Conversation => {
    const session =
      typeof options.session === 'function' ? options.session(runtime) : options.session;
    let c = conversations.get(session);
    if (!c) conversations.set(session, (c = new Conversation(session, policy, classify, kept)));
    return c;
  };

  const counterOf = (runtime: Runtime): TokenCounter =>
    runtime.context?.tokenCounter ??
    (options.summarization.tokenCounter as TokenCounter | undefined) ??
    countTokensApproximately;

  /**
   * What the summarizer saw of `toSummarize`: the longest run of whole messages ending at the
   * cutoff that langchain's own trimming (same function, same settings) kept unchanged. A
   * message kept only in part, or a kept system message before a gap, counts as not seen: the
   * claim can only be smaller than the truth (fail closed).
   */
  async function seenFrom(
    toSummarize: BaseMessage[],
    count: TokenCounter,
    runtime: Runtime,
  ): Promise<number> {
    const limit =
      runtime.context?.trimTokensToSummarize ??
      options.summarization.trimTokensToSummarize ??
      LANGCHAIN_DEFAULT_TRIM_TOKENS;
    let trimmed: BaseMessage[];
    try {
      trimmed = await trimMessages(toSummarize, {
        maxTokens: limit,
        tokenCounter: async (ms: BaseMessage[]) => count(ms),
        strategy: 'last',
        allowPartial: true,
        includeSystem: true,
      });
    } catch {
      trimmed = toSummarize.slice(-15); // langchain's own fallback
    }
    const kept = new Map(trimmed.map((m) => [m.id, JSON.stringify(m.content)]));
    let first = toSummarize.length;
    while (first > 0) {
      const m = toSummarize[first - 1]!;
      if (kept.get(m.id) !== JSON.stringify(m.content)) break;
      first--;
    }
    return first;
  }

  const beforeModel = async (state: State, runtime: Runtime) => {
    const count = counterOf(runtime);
    const conversation = conversationOf(runtime);
    const { session, positions } = conversation;
    const span = (m: BaseMessage) => conversation.span(m);
    await conversation.follow(state.messages, count);
    // langchain summarizes a prefix and keeps a suffix of what it is given: given in position
    // order, they are a prefix and a suffix of the positions too (keepPinned's copies are newer
    // turns than the messages after them).
    const messages = positions.inPositionOrder(state.messages, (m) => m.id!);
    const call = { threw: null as Error | null };
    const update = (await summarizerCall.run(call, () =>
      innerHook({ ...state, messages }, runtime),
    )) as { messages: BaseMessage[] } | undefined;
    if (!update) return update;
    const [removeAll, summary, ...preserved] = update.messages;
    if (!summary || !HumanMessage.isInstance(summary))
      throw new Error('compaction-guard: unexpected update from langchain summarization');
    const cutoff =
      preserved.length === 0
        ? messages.length
        : messages.findIndex((m) => m.id === preserved[0]!.id);
    if (cutoff < 0 || messages.length - cutoff !== preserved.length)
      throw new Error('compaction-guard: the kept messages are not the end of the history');
    const tailStart = cutoff < messages.length ? span(messages[cutoff]!).start : session.head(unit);
    const toSummarize = messages.slice(0, cutoff);
    const first = await seenFrom(toSummarize, count, runtime);
    const summaryInput = {
      start: first < cutoff ? span(messages[first]!).start : tailStart,
      end: tailStart,
    };
    const prefix =
      (runtime.context as { summaryPrefix?: string } | undefined)?.summaryPrefix ??
      options.summarization.summaryPrefix ??
      LANGCHAIN_DEFAULT_SUMMARY_PREFIX;
    const text = summaryText(summary, prefix);
    const approved = await offerSummary({
      session,
      unit,
      summaryInput,
      tailStart,
      occupancyTokens: Math.ceil(await count(messages)),
      summary: { text, threw: call.threw },
      countText: (t) => count([new HumanMessage(t)]),
      inputTokens: first < cutoff ? Math.ceil(await count(toSummarize.slice(first))) : 0,
      transcript: (r: TranscriptRange) => conversation.lines(r),
      options,
      counts,
    });
    if (!approved) return undefined; // the history stays as it is
    const keptIds = new Set(preserved.map((m) => m.id));
    const { block, rest, copies } = arrangeAfterSummary({
      summarized: toSummarize,
      preserved: state.messages.filter((m) => keptIds.has(m.id)),
      pinned: (m) => positions.pinned(m.id!),
      inBlock: (m) => positions.inBlock(m.id!),
      origin: (m) => positions.origin(m.id!),
      copy: verbatimCopy,
    });
    await conversation.compacted(summary, preserved, tailStart, copies, count);
    counts.pinnedKept += copies.length;
    return { ...update, messages: [removeAll!, summary, ...block, ...rest] };
  };

  // Typed as langchain's own middleware: same context schema (runtime.context overrides), and
  // createAgent infers nothing else from it.
  const middleware = createMiddleware({
    name: 'CompactionGuardSummarization',
    contextSchema: inner.contextSchema as never,
    beforeModel: beforeModel as never,
  }) as unknown as typeof inner;
  return Object.assign(middleware, { counts });
}
