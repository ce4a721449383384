/**
 * The seed's incident in a real framework: a langchain v1 `createAgent` agent with langchain's
 * own summarization middleware at its defaults (keep 20 messages, trimTokensToSummarize 4000,
 * the approximate token counter), a fake model, a long tool-heavy conversation whose first user
 * message states a rule. Through the real broker and processor: the guard refuses the summary
 * (the rule would be dropped unsummarized), the history is spilled, the retry is APPROVE
 * LOSSLESS_SPILL. With the whole history within the summarizer's input: APPROVE, no spill.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import {
  FileSpillStore,
  type GuardedSession,
  type SessionSnapshot,
  type SpillStore,
} from '../../src/client';
import type { Verdict } from '../../src/engine/outputs';
import {
  CompactionRefusedError,
  guardedSummarization,
  type GuardRefusal,
  type GuardedSummarizationOptions,
  type RefusalReason,
} from '../../src/integrations/langchain';
import { type Consumed, decodeOutput, readTopics } from './pipeline';
import { signedStack, testKeys, type Stack, viewUntil } from './client/harness';
import { readLog, scriptedModel, summaryModel } from '../support/langchainAgent';
import { RULE } from '../support/ruleConversation';

jest.setTimeout(240_000);

const ROUNDS = 25;

/** 25 tool rounds of ~1,000-token results, then a final answer; a summary model that always answers. */
async function converse(
  s: Stack,
  sessionId: string,
  trimTokensToSummarize: number | undefined,
  store: SpillStore,
  guard: Pick<GuardedSummarizationOptions, 'policy' | 'onRefusal'> = {},
  summarizer: ReturnType<typeof summaryModel> = summaryModel(),
) {
  const model = scriptedModel(ROUNDS);
  const refusals: GuardRefusal[] = [];
  const also = guard.onRefusal === 'throw' ? undefined : guard.onRefusal;
  const writes: string[] = [];
  const session = s.client.session(sessionId);
  const middleware = guardedSummarization({
    summarization: {
      model: summarizer,
      trigger: { tokens: 20_000 },
      ...(trimTokensToSummarize !== undefined ? { trimTokensToSummarize } : {}),
    },
    session,
    spill: {
      write: async (w) => {
        const h = await store.write(w);
        writes.push(h);
        return h;
      },
      read: (h) => store.read(h),
    },
    ...guard,
    onRefusal:
      guard.onRefusal === 'throw'
        ? 'throw'
        : async (r) => {
            refusals.push(r);
            await also?.(r);
          },
  });
  const agent = createAgent({ model, tools: [readLog], middleware: [middleware] });
  const result = await agent.invoke(
    { messages: [new HumanMessage(RULE)] },
    { recursionLimit: 500 },
  );
  // Up to the session's APPROVE, or as many verdicts as refusals were surfaced: every verdict
  // before it is in the same partition, earlier. Nothing to read when nothing was asked.
  const asked = refusals.filter((r) => r.requestId !== null).length + middleware.counts.committed;
  const mine = (rs: Consumed[]) =>
    rs
      .filter((r) => r.key === sessionId)
      .map((r) => decodeOutput(s.config, r) as unknown as Verdict);
  const verdicts =
    asked === 0
      ? []
      : mine(
          await readTopics(
            [s.config.verdictTopic],
            (rs) => {
              const v = mine(rs);
              return (
                v.some((x) => x.decision === 'APPROVE') ||
                (refusals.length > 0 && v.length >= asked)
              );
            },
            10_000,
          ),
        );
  return {
    messages: result.messages as BaseMessage[],
    refusals,
    writes,
    verdicts,
    session,
    counts: middleware.counts,
  };
}

describe('langchain createAgent with guarded summarization, through the real processor', () => {
  let s: Stack;
  let dir: string;
  beforeAll(async () => {
    // A ring (contract §4b): the middleware's spill answers count only because they are signed.
    s = await signedStack(testKeys());
    dir = mkdtempSync(path.join(tmpdir(), 'cg-lc-'));
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("langchain's defaults drop the first user message's rule unsummarized: REFUSE (EVICTED_PINNED, EVICTED_UNCOVERED), spill of the full history (signed SpillCompleted), APPROVE LOSSLESS_SPILL", async () => {
    const store = new FileSpillStore(dir);
    const run = await converse(s, `lc-default-${s.config.groupId}`, undefined, store);
    const [first, ...rest] = run.verdicts;
    expect(first).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    expect(first!.reasons.map((r) => r.code)).toEqual(
      expect.arrayContaining(['EVICTED_PINNED', 'EVICTED_UNCOVERED']),
    );
    expect(rest[0]).toMatchObject({
      requestId: first!.requestId,
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
    expect(run.refusals).toEqual([]);
    // The spill holds the whole history, the rule first, read back through its sha256 handle.
    expect(run.writes).toHaveLength(1);
    const spilled = (await store.read(run.writes[0]!))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: { content: string } });
    expect(spilled[0]).toMatchObject({ type: 'human', data: { content: RULE } });
    expect(spilled.length).toBeGreaterThan(40);
    // The summary went ahead: the agent's history now starts with it, and keepPinned put the
    // rule back verbatim right after it.
    expect(run.messages[0]!.additional_kwargs).toMatchObject({ lc_source: 'summarization' });
    expect(run.messages[1]).toMatchObject({ content: RULE });
    expect(run.messages.filter((m) => m.content === RULE)).toHaveLength(1);
    expect(run.counts.toJSON()).toMatchObject({ committed: 1, pinnedKept: 1 });
  });

  it('with the whole history within the summarizer input (trimTokensToSummarize 1,000,000): APPROVE INVARIANT_HOLDS and no spill', async () => {
    const store = new FileSpillStore(dir);
    const run = await converse(s, `lc-whole-${s.config.groupId}`, 1_000_000, store);
    expect(run.verdicts.length).toBeGreaterThan(0);
    for (const v of run.verdicts)
      expect(v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    expect(run.writes).toEqual([]);
    expect(run.refusals).toEqual([]);
    expect(run.messages[0]!.additional_kwargs).toMatchObject({ lc_source: 'summarization' });
  });

  it('spills disabled: REFUSE/HALT, the summary is skipped, the history stays intact and the refusal reaches the callback', async () => {
    const store = new FileSpillStore(dir);
    const seen: GuardRefusal[] = [];
    const run = await converse(s, `lc-halt-${s.config.groupId}`, undefined, store, {
      policy: { spill: 'DISABLED' },
      onRefusal: (r) => {
        seen.push(r);
      },
    });
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen)
      expect(r).toMatchObject({
        reason: 'HALTED',
        verdict: { decision: 'REFUSE', action: 'HALT' },
      });
    expect(seen[0]!.verdict!.reasons.map((r) => r.code)).toContain('EVICTED_PINNED');
    expect(run.writes).toEqual([]);
    // Nothing was summarized away: the rule is still the first message, every tool round is there.
    expect(run.messages[0]).toMatchObject({ content: RULE });
    expect(run.messages).toHaveLength(1 + 2 * ROUNDS + 1);
  });

  it("onRefusal 'throw': the agent run fails with CompactionRefusedError carrying the HALT verdict", async () => {
    const store = new FileSpillStore(dir);
    const err = await converse(s, `lc-throw-${s.config.groupId}`, undefined, store, {
      policy: { spill: 'DISABLED' },
      onRefusal: 'throw',
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CompactionRefusedError);
    expect((err as CompactionRefusedError).refusal.verdict).toMatchObject({ action: 'HALT' });
  });

  it('a conversation resumed after a crash, whose transcript lacks the turns sent before it: the spill fails (SpillFailed, nothing stored) and the guard HALTs, never LOSSLESS_SPILL', async () => {
    const store = new FileSpillStore(dir);
    const sessionId = `lc-resume-${s.config.groupId}`;
    let snapshot: SessionSnapshot | null = null;
    const middleware = (session: GuardedSession, refusals: GuardRefusal[], writes: string[]) =>
      guardedSummarization({
        summarization: { model: summaryModel(), trigger: { tokens: 20_000 } },
        session,
        spill: {
          write: async (w) => {
            writes.push(await store.write(w));
            return writes.at(-1)!;
          },
          read: (h) => store.read(h),
        },
        onRefusal: (r) => {
          refusals.push(r);
        },
      });
    // Before the crash: 10 tool rounds, below the summarization trigger; the snapshot persisted.
    const before = s.client.session(sessionId, { persist: (snap) => void (snapshot = snap) });
    const refusals: GuardRefusal[] = [];
    const writes: string[] = [];
    const first = await createAgent({
      model: scriptedModel(10),
      tools: [readLog],
      middleware: [middleware(before, refusals, writes)],
    }).invoke({ messages: [new HumanMessage(RULE)] }, { recursionLimit: 500 });
    expect(refusals).toEqual([]);
    expect(before.turns).toBeGreaterThan(20);
    // After: a new process resumes the session from its snapshot and carries on with the
    // agent's checkpointed history; its transcript holds only what it sees from now on.
    const resumed = await s.client.resume(snapshot!);
    await createAgent({
      model: scriptedModel(15, 1, 10),
      tools: [readLog],
      middleware: [middleware(resumed, refusals, writes)],
    }).invoke(
      { messages: [...(first.messages as BaseMessage[]), new HumanMessage('Now the other 15.')] },
      { recursionLimit: 500 },
    );
    const view = await viewUntil(s, sessionId, (v) => v.spillFailed === true);
    expect(view).toMatchObject({ spillFailed: true, spilled: [] });
    expect(writes).toEqual([]);
    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals)
      expect(r.verdict).toMatchObject({ decision: 'REFUSE', action: 'HALT' });
    const verdicts = (
      await readTopics(
        [s.config.verdictTopic],
        (rs) => rs.filter((r) => r.key === sessionId).length > refusals.length,
        10_000,
      )
    )
      .filter((r) => r.key === sessionId)
      .map((r) => decodeOutput(s.config, r) as unknown as Verdict);
    expect(verdicts[0]).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    expect(verdicts.slice(1).map((v) => `${v.decision}/${v.action}`)).toEqual(
      verdicts.slice(1).map(() => 'REFUSE/HALT'),
    );
    expect(verdicts.some((v) => v.basis === 'LOSSLESS_SPILL')).toBe(false);
  });

  it('one agent, two threads: the session function gives each thread_id its own session, each refused, spilled and approved on its own', async () => {
    const store = new FileSpillStore(dir);
    const sessions = new Map<string, GuardedSession>();
    const verdicts: Verdict[] = [];
    const agent = createAgent({
      model: scriptedModel(ROUNDS, 2),
      tools: [readLog],
      middleware: [
        guardedSummarization({
          summarization: { model: summaryModel(), trigger: { tokens: 20_000 } },
          session: (rt) => {
            const thread = `lc-thread-${rt.configurable?.thread_id}-${s.config.groupId}`;
            if (!sessions.has(thread)) sessions.set(thread, s.client.session(thread));
            return sessions.get(thread)!;
          },
          spill: store,
          onVerdict: (v) => verdicts.push(v),
        }),
      ],
    });
    for (const thread_id of ['a', 'b'])
      await agent.invoke(
        { messages: [new HumanMessage(RULE)] },
        { recursionLimit: 500, configurable: { thread_id } },
      );
    expect([...sessions.keys()]).toHaveLength(2);
    for (const session of sessions.values()) {
      const mine = verdicts.filter((v) => v.sessionId === session.sessionId);
      expect(mine.map((v) => `${v.decision}/${v.action}`)).toEqual([
        'REFUSE/SPILL',
        'APPROVE/NONE',
      ]);
      expect(mine[1]).toMatchObject({ basis: 'LOSSLESS_SPILL' });
      // Each session followed its own thread only: a turn per message seen before a model call
      // (the rule, 25 tool calls and their results; the final answer comes after the last one),
      // and one for the rule's copy that keepPinned put back after the committed summary.
      expect(session.turns).toBe(1 + 2 * ROUNDS + 1);
    }
  });

  describe('a degenerate summary is never committed: the history stays intact and onRefusal is told why', () => {
    const cases: [string, RefusalReason, string | Error][] = [
      ['an empty summary', 'EMPTY_SUMMARY', ''],
      ['a whitespace summary', 'EMPTY_SUMMARY', '  \n\t '],
      ['a known error text', 'ERROR_SUMMARY', 'Previous conversation was too long to summarize.'],
      ['a summarizer call that throws', 'SUMMARIZER_THREW', new Error('summarizer unavailable')],
      ['a summary too short for its input', 'SUMMARY_TOO_SHORT', 'OK.'],
    ];
    it.each(cases)('%s → %s', async (name, reason, answer) => {
      const summarizer = summaryModel(0);
      for (let i = 0; i < 40; i++)
        summarizer.respond(answer instanceof Error ? answer : new AIMessage(answer));
      const id = `lc-degenerate-${reason}-${name.length}-${s.config.groupId}`;
      const run = await converse(s, id, undefined, new FileSpillStore(dir), {}, summarizer);
      expect(run.refusals.length).toBeGreaterThan(0);
      for (const r of run.refusals)
        expect(r).toMatchObject({ reason, requestId: null, verdict: null });
      expect(run.counts.committed).toBe(0);
      expect(run.counts.refused[reason]).toBe(run.refusals.length);
      // Never offered: the session sent SessionOpened and one TurnAppended per message, no request.
      expect(run.session.seq).toBe(1 + run.session.turns);
      expect(run.verdicts).toEqual([]);
      // The history is whole: the rule first, every tool round, the final answer.
      expect(run.messages[0]).toMatchObject({ content: RULE });
      expect(run.messages).toHaveLength(1 + 2 * ROUNDS + 1);
    });
  });
});
