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
import { randomUUID } from 'node:crypto';
import type { Policy, Span, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import { GuardTimeoutError, GuardUsageError } from '../../client/errors';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import type { SpillStore } from '../../client/spill';
import { Conversation, type TokenCounter } from './conversation';
import { defaultPins, type PinClassifier } from './pins';

/**
 * langchain's `trimTokensToSummarize` when none is given (DEFAULT_TRIM_TOKEN_LIMIT in
 * langchain/src/agents/middleware/summarization.ts, not exported).
 */
export const LANGCHAIN_DEFAULT_TRIM_TOKENS = 4000;
/** langchain's default `keep: { messages: 20 }`. */
const LANGCHAIN_DEFAULT_KEEP_MESSAGES = 20;

/** Why a summary was held back: a refusal, or no verdict (fail closed). */
export interface GuardRefusal {
  sessionId: string;
  requestId: string;
  summaryInput: Span;
  tailStart: number;
  unit: Unit;
  /** The final verdict; null when none came (then `error` says why). */
  verdict: Verdict | null;
  error: Error | null;
}

/** Thrown by the agent run in `onRefusal: 'throw'` mode; the history is left intact. */
export class CompactionRefusedError extends Error {
  override readonly name = 'CompactionRefusedError';
  constructor(readonly refusal: GuardRefusal) {
    super(
      refusal.verdict
        ? `compaction-guard refused the summary (${refusal.verdict.action}): ${refusal.verdict.diagnostic ?? ''}`
        : `no verdict for the summary, so it was not applied: ${refusal.error?.message ?? ''}`,
    );
  }
}

export interface GuardedSummarizationOptions {
  /** langchain's summarization options, passed to its `summarizationMiddleware` unchanged. */
  summarization: SummarizationMiddlewareConfig;
  /**
   * The guard's session of the conversation (opened on first use if it is new): one session, or
   * a function of the run (e.g. `(rt) => sessions.get(rt.configurable?.thread_id)`) returning
   * the same GuardedSession object for every run of one thread, for an agent serving many.
   */
  session: GuardedSession | ((runtime: GuardRuntime) => GuardedSession);
  /** Where the full history goes when the guard asks for a spill. */
  spill: SpillStore;
  /**
   * The policy sent in SessionOpened. Default: floor = langchain's `keep` (messages, or tokens)
   * in that unit, truncator in the same unit, STRICT coverage, spills enabled.
   */
  policy?: Partial<Policy>;
  /** Pins per message; default `defaultPins` (pins.ts). */
  pins?: PinClassifier;
  /**
   * A held-back summary: a callback (the run goes on with the history intact), or 'throw' (the
   * run fails with CompactionRefusedError, the history intact). Default: a callback that does
   * nothing.
   */
  onRefusal?: ((refusal: GuardRefusal) => void | Promise<void>) | 'throw';
  /** Verdict wait per request (ms); default the client's. */
  timeoutMs?: number;
  /** Told every verdict, the spill loop's intermediate REFUSE included (logs, metrics). */
  onVerdict?: (verdict: Verdict) => void;
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

/**
 * Use in place of `summarizationMiddleware(options.summarization)` in `createAgent`'s
 * `middleware`. It follows each session's messages (one session, or one per thread).
 */
export function guardedSummarization(options: GuardedSummarizationOptions) {
  const inner = summarizationMiddleware(options.summarization);
  const innerHook = (typeof inner.beforeModel === 'function'
    ? inner.beforeModel
    : (inner.beforeModel as { hook: unknown } | undefined)?.hook) as unknown as Hook;
  const policy = defaultPolicy(options.summarization, options.policy);
  const unit = policy.floor.unit;
  const classify = options.pins ?? defaultPins;
  const conversations = new WeakMap<GuardedSession, Conversation>();
  const conversationOf = (runtime: Runtime): Conversation => {
    const session =
      typeof options.session === 'function' ? options.session(runtime) : options.session;
    let c = conversations.get(session);
    if (!c) conversations.set(session, (c = new Conversation(session, policy, classify)));
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

  async function refuse(r: GuardRefusal): Promise<void> {
    if (options.onRefusal === 'throw') throw new CompactionRefusedError(r);
    await options.onRefusal?.(r);
  }

  const beforeModel = async (state: State, runtime: Runtime) => {
    const count = counterOf(runtime);
    const conversation = conversationOf(runtime);
    const { session } = conversation;
    const span = (m: BaseMessage) => conversation.span(m);
    await conversation.follow(state.messages, count);
    const update = (await innerHook(state, runtime)) as { messages: BaseMessage[] } | undefined;
    if (!update) return update;
    const messages = state.messages;
    const [, summary, ...preserved] = update.messages;
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
    const requestId = `summary-${randomUUID()}`;
    const occupancyTokens = Math.ceil(await count(messages));
    let verdict: Verdict | null = null;
    let error: Error | null = null;
    try {
      verdict = await session.requestCompaction(
        { requestId, unit, summaryInput, tailStart, occupancyTokens },
        {
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.onVerdict ? { onVerdict: options.onVerdict } : {}),
          spill: {
            store: options.spill,
            transcript: (r: TranscriptRange) => conversation.lines(r),
          },
        },
      );
    } catch (e) {
      if (!(e instanceof GuardTimeoutError)) throw e;
      error = e;
    }
    if (verdict?.decision !== 'APPROVE') {
      await refuse({
        sessionId: session.sessionId,
        requestId,
        summaryInput,
        tailStart,
        unit,
        verdict,
        error,
      });
      return undefined; // the history stays as it is
    }
    await session.committed({ requestId, unit, summaryInput, tailStart });
    conversation.summarized(summary, preserved, tailStart);
    return update;
  };

  // Typed as langchain's own middleware: same context schema (runtime.context overrides), and
  // createAgent infers nothing else from it.
  return createMiddleware({
    name: 'CompactionGuardSummarization',
    contextSchema: inner.contextSchema as never,
    beforeModel: beforeModel as never,
  }) as unknown as typeof inner;
}
