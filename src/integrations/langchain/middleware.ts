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
import type { GuardedSession } from '../../client/session';
import { GuardedConversation } from '../compaction/conversation';
import { keptPins } from '../compaction/keepPinned';
import type { GuardedSummaryOptions } from '../compaction/options';
import { DEFAULT_KEEP_MESSAGES, policyOf } from '../compaction/policy';
import { CompactionCounts } from '../compaction/refusal';
import { compactionRound } from '../compaction/round';
import { DEFAULT_SUMMARY_PREFIX, withoutSummaryPrefix } from '../compaction/summaryPrefix';
import { baseMessages } from './adapter';
import { defaultPins, type PinClassifier, textOf, type TokenCounter } from './pins';

/**
 * langchain's `trimTokensToSummarize` when none is given (DEFAULT_TRIM_TOKEN_LIMIT in
 * langchain/src/agents/middleware/summarization.ts, not exported).
 */
export const LANGCHAIN_DEFAULT_TRIM_TOKENS = 4000;
/** langchain's summary prefix when none is given (DEFAULT_SUMMARY_PREFIX, not exported). */
export const LANGCHAIN_DEFAULT_SUMMARY_PREFIX = DEFAULT_SUMMARY_PREFIX;

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

/**
 * The policy's defaults from langchain's settings: the floor is its `keep` (messages, or
 * tokens), the trigger its `trigger.tokens` (else 80% of the window).
 */
function policyFor(c: SummarizationMiddlewareConfig, given: Partial<Policy> = {}): Policy {
  const keep = c.keep as { messages?: number; tokens?: number; fraction?: number } | undefined;
  const trigger = Array.isArray(c.trigger)
    ? undefined
    : (c.trigger as { tokens?: number } | undefined);
  return policyOf(given, {
    floor: () => {
      if (keep?.tokens !== undefined) return { unit: 'TOKENS', span: Math.floor(keep.tokens) };
      if (keep?.fraction !== undefined)
        throw new GuardUsageError(
          'policy.floor',
          'langchain keep is a fraction of the model context: give the floor explicitly',
        );
      return { unit: 'MESSAGES', span: keep?.messages ?? DEFAULT_KEEP_MESSAGES };
    },
    triggerTokens: (windowTokens) => trigger?.tokens ?? Math.floor(windowTokens * 0.8),
  });
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
  const policy = policyFor(options.summarization, options.policy);
  const classify = options.pins ?? defaultPins;
  const kept = keptPins(options.keepPinned);
  const counts = new CompactionCounts();
  type Conversation = GuardedConversation<BaseMessage, string>;
  const conversations = new WeakMap<GuardedSession, Conversation>();
  const conversationOf = (runtime: Runtime): Conversation => {
    const session =
      typeof options.session === 'function' ? options.session(runtime) : options.session;
    let c = conversations.get(session);
    if (!c) {
      c = new GuardedConversation(session, policy, baseMessages, classify, kept);
      conversations.set(session, c);
    }
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
    await conversation.follow(state.messages, count);
    // langchain summarizes a prefix and keeps a suffix of what it is given: given in position
    // order, they are a prefix and a suffix of the positions too (keepPinned's copies are newer
    // turns than the messages after them).
    const messages = conversation.inPositionOrder(state.messages);
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
    const prefix =
      (runtime.context as { summaryPrefix?: string } | undefined)?.summaryPrefix ??
      options.summarization.summaryPrefix ??
      LANGCHAIN_DEFAULT_SUMMARY_PREFIX;
    const next = await compactionRound(conversation, {
      context: state.messages,
      ordered: messages,
      cutoff,
      firstShown: await seenFrom(messages.slice(0, cutoff), count, runtime),
      occupancyTokens: Math.ceil(await count(messages)),
      summary: {
        message: summary,
        text: withoutSummaryPrefix(textOf(summary), prefix),
        threw: call.threw,
      },
      count,
      options,
      counts,
    });
    if (!next) return undefined; // the history stays as it is
    return { ...update, messages: [removeAll!, ...next] };
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
