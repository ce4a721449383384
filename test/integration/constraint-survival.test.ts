/**
 * Constraint survival, measured: a long tool-heavy conversation whose first user message states
 * a rule goes through at least five compactions whose summaries leave the rule out, once in
 * langchain's `createAgent` (its summarization middleware at its defaults, plus the guard) and
 * once in an AI SDK `generateText` loop with the helper, through the real broker and processor.
 * Every model call's input is recorded: with keepPinned the rule reaches the model verbatim
 * after every compaction (k of k); without it, it is gone after the first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { generateText, isStepCount } from 'ai';
import { createAgent } from 'langchain';
import { FileSpillStore } from '../../src/client';
import { guardedCompaction } from '../../src/integrations/ai-sdk';
import { guardedSummarization } from '../../src/integrations/langchain';
import {
  aiSummaryModel,
  readLogTool,
  receivedByAiSdk,
  scriptedAiModel,
} from '../support/aiSdkAgent';
import {
  readLog,
  receivedByLangchain,
  scriptedModel,
  summaryModel,
} from '../support/langchainAgent';
import { RULE, survival, type Survival } from '../support/ruleConversation';
import { stack, type Stack } from './client/harness';

jest.setTimeout(300_000);

/** Tool rounds of ~1,000 tokens each: with a 20,000-token trigger, well over five compactions. */
const ROUNDS = 80;
const TRIGGER_TOKENS = 20_000;

describe('constraint survival over many compactions, through the real processor', () => {
  let s: Stack;
  let dir: string;
  const measured: string[] = [];
  beforeAll(async () => {
    s = await stack();
    dir = mkdtempSync(path.join(tmpdir(), 'cg-survival-'));
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
    console.log(
      `constraint survival (rule kept verbatim after k compactions):\n${measured.join('\n')}`,
    );
  });

  /** Records the counts, and holds them to k of k with keepPinned, none without, k ≥ 5. */
  function judge(framework: string, withIt: Survival, without: Survival): void {
    measured.push(
      `  ${framework}: with keepPinned ${withIt.ruleKept} of ${withIt.compactions}; without ${without.ruleKept} of ${without.compactions}`,
    );
    expect(withIt.compactions).toBeGreaterThanOrEqual(5);
    expect(withIt.ruleKept).toBe(withIt.compactions);
    expect(withIt.mostCopies).toBe(1);
    expect(without.compactions).toBeGreaterThanOrEqual(5);
    expect(without.ruleKept).toBe(0);
  }

  async function langchain(keepPinned: boolean) {
    const model = scriptedModel(ROUNDS);
    const middleware = guardedSummarization({
      // langchain's defaults (keep 20 messages, trimTokensToSummarize 4000, approximate counter)
      // and the trigger it needs to summarize at all.
      summarization: { model: summaryModel(40), trigger: { tokens: TRIGGER_TOKENS } },
      session: s.client.session(`survival-lc-${keepPinned}-${s.config.groupId}`),
      spill: new FileSpillStore(dir),
      keepPinned,
    });
    const agent = createAgent({ model, tools: [readLog], middleware: [middleware] });
    await agent.invoke({ messages: [new HumanMessage(RULE)] }, { recursionLimit: 1_000 });
    expect(model.callCount).toBe(ROUNDS + 1);
    return {
      survival: survival(model.calls.map((c) => receivedByLangchain(c.messages))),
      middleware,
    };
  }

  async function aiSdk(keepPinned: boolean) {
    const model = scriptedAiModel(ROUNDS);
    const guard = guardedCompaction({
      session: s.client.session(`survival-ai-${keepPinned}-${s.config.groupId}`),
      spill: new FileSpillStore(dir),
      summarizer: aiSummaryModel(),
      triggerTokens: TRIGGER_TOKENS,
      summaryInputTokens: 4_000,
      keepPinned,
    });
    await generateText({
      model,
      tools: { read_log: readLogTool },
      messages: [{ role: 'user', content: RULE }],
      stopWhen: isStepCount(ROUNDS + 2),
      prepareStep: guard.prepareStep,
    });
    expect(model.doGenerateCalls).toHaveLength(ROUNDS + 1);
    return { survival: survival(model.doGenerateCalls.map(receivedByAiSdk)), guard };
  }

  it('langchain createAgent (summarization at its defaults + the guard): with keepPinned the rule reaches the model verbatim after k of k compactions (k ≥ 5), once per call; without it, after none', async () => {
    const withIt = await langchain(true);
    const without = await langchain(false);
    judge('LangChain createAgent', withIt.survival, without.survival);
    expect(withIt.middleware.counts.committed).toBe(withIt.survival.compactions);
    expect(without.middleware.counts.pinnedKept).toBe(0);
  });

  it('AI SDK generateText loop with the helper: with keepPinned the rule reaches the model verbatim after k of k compactions (k ≥ 5), once per call; without it, after none', async () => {
    const withIt = await aiSdk(true);
    const without = await aiSdk(false);
    judge('AI SDK generateText', withIt.survival, without.survival);
    expect(withIt.guard.counts.committed).toBe(withIt.survival.compactions);
    expect(without.guard.counts.pinnedKept).toBe(0);
  });
});
