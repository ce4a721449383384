/**
 * A HALT in the integrations (src/integrations/compaction/refusal.ts): its own reason, HALTED,
 * and by default one console.warn per HALT with the verdict's diagnostic and the on-call
 * commands; a user's onRefusal replaces that warning. A REFUSE/SPILL the spill loop could not
 * satisfy stays REFUSED and is not warned of. Both integrations, against a session that answers
 * every request itself (no Kafka).
 */
import { HumanMessage } from '@langchain/core/messages';
import type { ModelMessage } from 'ai';
import { createAgent } from 'langchain';
import type { Action, Verdict } from '../../src/engine/outputs';
import type { GuardedSession, TurnInput } from '../../src/client/session';
import type { SpillStore } from '../../src/client/spill';
import { guardedCompaction, type GuardRefusal } from '../../src/integrations/ai-sdk';
import { guardedSummarization } from '../../src/integrations/langchain';
import { readLog, scriptedModel, summaryModel } from '../support/langchainAgent';
import { RULE } from '../support/ruleConversation';

const DIAGNOSTIC =
  'REFUSE (HALT): EVICTED_PINNED at MESSAGES [0,1). No spill can help: spills are disabled by policy.';

/** A session whose every request is refused with `action`, one message a position. */
function refusingSession(action: Exclude<Action, 'NONE'>): GuardedSession {
  let turns = 0;
  let seq = 0;
  const verdict = (requestId: string): Verdict => ({
    sessionId: 'halted-session',
    requestId,
    decision: 'REFUSE',
    basis: null,
    action,
    reasons: [
      {
        code: 'EVICTED_PINNED',
        message: 'a pinned turn would be evicted',
        holes: [{ unit: 'MESSAGES', start: 0, end: 1 }],
      },
    ],
    rulesChecked: ['EVICTED_PINNED'],
    diagnostic:
      action === 'HALT' ? DIAGNOSTIC : 'REFUSE (SPILL): EVICTED_PINNED at MESSAGES [0,1).',
    spillRequestId: null,
    inputSeq: seq,
    requestEventId: null,
    requestedAt: null,
    decidedAt: 0,
    engineVersion: 'test',
  });
  const session = {
    sessionId: 'halted-session',
    get seq() {
      return seq;
    },
    open: async () => void seq++,
    appendTurn: async (t: TurnInput) => {
      seq++;
      const turn = turns++;
      return {
        turn,
        tokens: { start: 0, end: t.tokens },
        messages: { start: turn, end: turn + 1 },
      };
    },
    head: () => turns,
    startOf: (turn: number) => turn,
    requestCompaction: async (r: { requestId: string }) => (seq++, verdict(r.requestId)),
    committed: async () => {
      throw new Error('nothing is approved here');
    },
  };
  return session as unknown as GuardedSession;
}

const spill: SpillStore = {
  write: () => Promise.reject(new Error('no spill here')),
  read: () => Promise.reject(new Error('no spill here')),
};

const SUMMARY =
  'The user asked to check the logs one by one and never delete anything under /prod.';

/** The rule, then `rounds` question and answer pairs. */
function conversation(rounds: number): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'user', content: RULE }];
  for (let i = 0; i < rounds; i++)
    messages.push(
      { role: 'user', content: `What is in app-${i}.log?` },
      { role: 'assistant', content: `app-${i}.log holds ${'a line of log output '.repeat(20)}` },
    );
  return messages;
}

function aiSdkHelper(action: Exclude<Action, 'NONE'>, onRefusal?: (r: GuardRefusal) => void) {
  return guardedCompaction({
    session: refusingSession(action),
    spill,
    summarizer: () => SUMMARY,
    triggerTokens: 100,
    keepMessages: 2,
    ...(onRefusal ? { onRefusal } : {}),
  });
}

let warn: jest.SpyInstance;
beforeEach(() => (warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined)));
afterEach(() => warn.mockRestore());

/** Every warning names the session, the diagnostic, the range and the on-call commands. */
function expectHaltWarnings(count: number): void {
  expect(warn).toHaveBeenCalledTimes(count);
  for (const [text] of warn.mock.calls as [string][]) {
    expect(text).toContain('compaction-guard HALT, session halted-session');
    expect(text).toContain(DIAGNOSTIC);
    expect(text).toContain('npx compaction-guard inspect halted-session');
    expect(text).toContain(
      'npx compaction-guard acknowledge --session halted-session --unit MESSAGES --range 0-1',
    );
  }
}

describe('AI SDK guardedCompaction on a HALT', () => {
  it('counts it as HALTED, keeps the messages and warns once, with the diagnostic, by default', async () => {
    const guard = aiSdkHelper('HALT');
    const messages = conversation(4);
    expect(await guard.compact(messages)).toBe(messages);
    expect(guard.counts.refused).toMatchObject({ HALTED: 1, REFUSED: 0 });
    expectHaltWarnings(1);
  });

  it('warns once per HALT: two compactions halted, two warnings', async () => {
    const guard = aiSdkHelper('HALT');
    const messages = conversation(4);
    await guard.compact(messages);
    await guard.compact([...messages, { role: 'user', content: 'And app-9.log?' }]);
    expect(guard.counts.refused.HALTED).toBe(2);
    expectHaltWarnings(2);
  });

  it('a user onRefusal replaces the warning and is told reason HALTED', async () => {
    const seen: GuardRefusal[] = [];
    const guard = aiSdkHelper('HALT', (r) => void seen.push(r));
    await guard.compact(conversation(4));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      reason: 'HALTED',
      verdict: { action: 'HALT', diagnostic: DIAGNOSTIC },
    });
    expect(warn).not.toHaveBeenCalled();
  });

  it('a REFUSE/SPILL the spill loop could not satisfy stays REFUSED, with no warning', async () => {
    const guard = aiSdkHelper('SPILL');
    await guard.compact(conversation(4));
    expect(guard.counts.refused).toMatchObject({ HALTED: 0, REFUSED: 1 });
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('LangChain guardedSummarization on a HALT', () => {
  async function run(onRefusal?: (r: GuardRefusal) => void) {
    const middleware = guardedSummarization({
      summarization: { model: summaryModel(20), trigger: { tokens: 2_000 }, keep: { messages: 2 } },
      session: refusingSession('HALT'),
      spill,
      ...(onRefusal ? { onRefusal } : {}),
    });
    const agent = createAgent({
      model: scriptedModel(6),
      tools: [readLog],
      middleware: [middleware],
    });
    const result = await agent.invoke(
      { messages: [new HumanMessage(RULE)] },
      { recursionLimit: 100 },
    );
    return { counts: middleware.counts, messages: result.messages };
  }

  it('counts each as HALTED, keeps the history and warns once per HALT, with the diagnostic, by default', async () => {
    const { counts, messages } = await run();
    expect(counts.refused.HALTED).toBeGreaterThan(0);
    expect(counts.refused.REFUSED).toBe(0);
    expect(counts.committed).toBe(0);
    expect(messages[0]).toMatchObject({ content: RULE });
    expectHaltWarnings(counts.refused.HALTED);
  });

  it('a user onRefusal replaces the warning and is told reason HALTED', async () => {
    const seen: GuardRefusal[] = [];
    const { counts } = await run((r) => void seen.push(r));
    expect(seen.length).toBe(counts.refused.HALTED);
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen)
      expect(r).toMatchObject({ reason: 'HALTED', verdict: { action: 'HALT' } });
    expect(warn).not.toHaveBeenCalled();
  });
});
