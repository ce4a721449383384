/**
 * compaction-guard/ai-sdk through the real broker and processor: `ai` 7's `generateText` with
 * `ai/test`'s mock model (no API key), the helper in `prepareStep` or between calls on a plain
 * messages array. The seed's incident is REFUSE/SPILL, then APPROVE LOSSLESS_SPILL; HALT, no
 * verdict, and every kind of degenerate summary keep the messages as they are.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { generateText, isStepCount, type ModelMessage } from 'ai';
import {
  FileSpillStore,
  GuardTimeoutError,
  GuardUsageError,
  type GuardClient,
  type SpillStore,
} from '../../src/client';
import type { Verdict } from '../../src/engine/outputs';
import {
  DEFAULT_SUMMARY_PREFIX,
  guardedCompaction,
  type GuardedCompactionOptions,
  type GuardRefusal,
  type RefusalReason,
} from '../../src/integrations/ai-sdk';
import {
  aiSummaryModel,
  readLogTool,
  ruleConversation,
  scriptedAiModel,
} from '../support/aiSdkAgent';
import { RULE } from '../support/ruleConversation';
import { clientFor, policy, stack, type Stack } from './client/harness';

jest.setTimeout(240_000);

const ROUNDS = 25;
const TRIGGER_TOKENS = 20_000;

describe('compaction-guard/ai-sdk, through the real processor', () => {
  let s: Stack;
  let dir: string;
  beforeAll(async () => {
    s = await stack();
    dir = mkdtempSync(path.join(tmpdir(), 'cg-ai-'));
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A store that records the handles it wrote. */
  function recordingStore(): SpillStore & { writes: string[] } {
    const store = new FileSpillStore(dir);
    const writes: string[] = [];
    return {
      writes,
      write: async (w) => {
        const h = await store.write(w);
        writes.push(h);
        return h;
      },
      read: (h) => store.read(h),
    };
  }

  function helper(
    name: string,
    extra: Partial<GuardedCompactionOptions> = {},
    client: GuardClient = s.client,
  ) {
    const verdicts: Verdict[] = [];
    const refusals: GuardRefusal[] = [];
    const spill = recordingStore();
    const session = client.session(`ai-${name}-${randomUUID()}`);
    const guard = guardedCompaction({
      session,
      spill,
      summarizer: aiSummaryModel(),
      triggerTokens: TRIGGER_TOKENS,
      onVerdict: (v) => verdicts.push(v),
      onRefusal: (r) => {
        refusals.push(r);
      },
      ...extra,
    });
    return { guard, session, verdicts, refusals, spill };
  }

  /** The agent loop: ROUNDS read_log calls and a final answer, the helper in prepareStep. */
  async function loop(guard: ReturnType<typeof helper>['guard']) {
    const model = scriptedAiModel(ROUNDS);
    await generateText({
      model,
      tools: { read_log: readLogTool },
      messages: [{ role: 'user', content: RULE }],
      stopWhen: isStepCount(ROUNDS + 2),
      prepareStep: guard.prepareStep,
    });
    return model.doGenerateCalls.map((c) => c.prompt);
  }

  it("the seed's incident in prepareStep: the summarizer is shown the last 4,000 tokens, so REFUSE/SPILL (EVICTED_PINNED on the rule), the full history spilled, APPROVE LOSSLESS_SPILL; the rule is put back right after the summary", async () => {
    const h = helper('seed', { summaryInputTokens: 4_000 });
    const prompts = await loop(h.guard);
    const [first, second] = h.verdicts;
    expect(first).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    expect(first!.reasons.map((r) => r.code)).toEqual(
      expect.arrayContaining(['EVICTED_PINNED', 'EVICTED_UNCOVERED']),
    );
    expect(second).toMatchObject({
      requestId: first!.requestId,
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
    expect(h.refusals).toEqual([]);
    // The spill holds the whole history, the rule first, read back through its sha256 handle.
    const spilled = (await h.spill.read(h.spill.writes[0]!))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ModelMessage);
    expect(spilled[0]).toEqual({ role: 'user', content: RULE });
    expect(spilled.length).toBeGreaterThan(30);
    // The model's next call after the compaction: the summary, then the rule verbatim.
    const after = prompts.find((p) => JSON.stringify(p[0]).includes(DEFAULT_SUMMARY_PREFIX))!;
    expect(after[1]).toMatchObject({ role: 'user', content: [{ type: 'text', text: RULE }] });
    expect(h.guard.counts.toJSON()).toMatchObject({ committed: 1, pinnedKept: 1 });
  });

  it('between calls on a plain messages array, the whole history shown to the summarizer: APPROVE INVARIANT_HOLDS, no spill, the summary and the rule first', async () => {
    const h = helper('manual');
    const model = scriptedAiModel(ROUNDS);
    let messages: ModelMessage[] = [{ role: 'user', content: RULE }];
    for (let step = 0; step <= ROUNDS; step++) {
      messages = await h.guard.compact(messages);
      const result = await generateText({
        model,
        tools: { read_log: readLogTool },
        messages,
      });
      messages = [...messages, ...result.responseMessages];
    }
    expect(h.verdicts.length).toBeGreaterThan(0);
    for (const v of h.verdicts)
      expect(v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    expect(h.spill.writes).toEqual([]);
    expect(messages[0]).toMatchObject({ role: 'user' });
    expect(String(messages[0]!.content)).toMatch(/^Here is a summary of the conversation to date:/);
    expect(messages[1]).toEqual({ role: 'user', content: RULE });
    expect(messages.filter((m) => m.content === RULE)).toHaveLength(1);
  });

  it('spills disabled: REFUSE/HALT, nothing is compacted, every model call gets every message so far', async () => {
    const h = helper('halt', { summaryInputTokens: 4_000, policy: { spill: 'DISABLED' } });
    const prompts = await loop(h.guard);
    expect(h.refusals.length).toBeGreaterThan(0);
    for (const r of h.refusals)
      expect(r).toMatchObject({
        reason: 'HALTED',
        verdict: { decision: 'REFUSE', action: 'HALT' },
      });
    expect(h.refusals[0]!.verdict!.reasons.map((r) => r.code)).toContain('EVICTED_PINNED');
    expect(h.guard.counts.committed).toBe(0);
    expect(h.guard.counts.refused.HALTED).toBe(h.refusals.length);
    expect(h.spill.writes).toEqual([]);
    // The last call saw the rule and every round: 1 + 2 × ROUNDS messages.
    const last = prompts[prompts.length - 1]!;
    expect(last).toHaveLength(1 + 2 * ROUNDS);
    expect(last[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: RULE }] });
  });

  it('no verdict in time (nobody answers on the topic the client reads): NO_VERDICT, the messages are kept', async () => {
    const deaf = await clientFor({ ...s.config, verdictTopic: `unanswered-${randomUUID()}` });
    try {
      const h = helper('timeout', { summaryInputTokens: 4_000, timeoutMs: 1_500 }, deaf);
      const messages = ruleConversation(ROUNDS);
      const next = await h.guard.compact(messages);
      expect(next).toBe(messages);
      expect(h.refusals).toHaveLength(1);
      expect(h.refusals[0]).toMatchObject({ reason: 'NO_VERDICT', verdict: null });
      expect(h.refusals[0]!.error).toBeInstanceOf(GuardTimeoutError);
      expect(h.guard.counts.refused.NO_VERDICT).toBe(1);
      expect(h.guard.counts.committed).toBe(0);
    } finally {
      await deaf.close();
    }
  });

  describe('a degenerate summary is never committed: messages kept, reason reported, nothing asked', () => {
    const cases: [string, RefusalReason, () => string][] = [
      ['an empty summary', 'EMPTY_SUMMARY', () => ''],
      ['a whitespace summary', 'EMPTY_SUMMARY', () => ' \n\t '],
      ['a known error text', 'ERROR_SUMMARY', () => 'Error generating summary: upstream 500'],
      [
        'a summarizer that throws',
        'SUMMARIZER_THREW',
        () => {
          throw new Error('summarizer unavailable');
        },
      ],
      ['a summary too short for its input', 'SUMMARY_TOO_SHORT', () => 'OK.'],
    ];
    it.each(cases)('%s → %s', async (name, reason, summarizer) => {
      const h = helper(`degenerate-${reason}`, { summarizer });
      const messages = ruleConversation(ROUNDS);
      const next = await h.guard.compact(messages);
      expect(next).toBe(messages);
      expect(h.refusals).toHaveLength(1);
      expect(h.refusals[0]).toMatchObject({ reason, requestId: null, verdict: null });
      expect(h.guard.counts.refused[reason]).toBe(1);
      expect(h.guard.counts.degenerate).toBe(1);
      // Nothing offered: SessionOpened and one TurnAppended per message, no request, no verdict.
      expect(h.session.seq).toBe(1 + messages.length);
      expect(h.verdicts).toEqual([]);
    });
  });

  it('a history changed outside the helper is refused with GuardUsageError naming the message', async () => {
    const h = helper('changed');
    const messages = ruleConversation(2);
    await h.guard.compact(messages);
    await expect(h.guard.compact(messages.slice(1))).rejects.toThrow(GuardUsageError);
    await expect(
      h.guard.compact([{ role: 'user', content: 'something else' }, ...messages.slice(1)]),
    ).rejects.toThrow(/messages\[0\]: not the message the guard saw there/);
  });

  it('a turn missing from the transcript (a session resumed in a new process) fails the spill: SpillFailed, then HALT, messages kept', async () => {
    const before = s.client.session(`ai-resumed-${randomUUID()}`);
    await before.open(policy('MESSAGES', 20));
    for (const role of ['USER', 'TOOL_CALL', 'TOOL_RESULT'] as const)
      await before.appendTurn({ role, tokens: 100, pins: role === 'USER' ? ['CONSTRAINT'] : [] });
    const resumed = await s.client.resume(before.snapshot());
    const verdicts: Verdict[] = [];
    const refusals: GuardRefusal[] = [];
    const spill = recordingStore();
    const guard = guardedCompaction({
      session: resumed,
      spill,
      summarizer: aiSummaryModel(),
      triggerTokens: TRIGGER_TOKENS,
      summaryInputTokens: 4_000,
      onVerdict: (v) => verdicts.push(v),
      onRefusal: (r) => {
        refusals.push(r);
      },
    });
    const messages = ruleConversation(ROUNDS);
    expect(await guard.compact(messages)).toBe(messages);
    expect(verdicts.map((v) => `${v.decision}/${v.action}`)).toEqual([
      'REFUSE/SPILL',
      'REFUSE/HALT',
    ]);
    expect(spill.writes).toEqual([]);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ reason: 'HALTED', verdict: { action: 'HALT' } });
  });
});
