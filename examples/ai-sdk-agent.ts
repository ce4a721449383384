/**
 * The seed's incident in the Vercel AI SDK (`ai` 7), guarded: a `generateText` tool loop with
 * the AI SDK's own mock model (no API key), 25 rounds of long log output, a rule in the first
 * user message, and compaction in `prepareStep` whose summarizer is shown the last 4,000 tokens
 * only. The first summary comes back as an error text and is held back; the next is refused
 * until the history is spilled, then committed, and the rule is put back verbatim after it.
 * Start the processor (`npm start`), then in another terminal:
 *
 *   npx tsx examples/ai-sdk-agent.ts
 */
import { generateText, isStepCount, jsonSchema, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { FileSpillStore, GuardClient } from 'compaction-guard/client';
import { guardedCompaction } from 'compaction-guard/ai-sdk';

const RULE = 'You must never delete anything under /prod. Read the 25 logs one by one.';
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};
const text = (t: string) => ({
  content: [{ type: 'text' as const, text: t }],
  finishReason: { unified: 'stop' as const, raw: undefined },
  usage,
  warnings: [],
});

async function main(): Promise<void> {
  const client = new GuardClient(); // npm start's embedded Kafka, or KAFKA_BROKERS
  await client.connect();
  let step = 0;
  const agent = new MockLanguageModelV4({
    // read 25 logs, then answer
    doGenerate: async () => {
      const i = step++;
      if (i === 25) return text('All 25 logs read; nothing under /prod was touched.');
      const input = JSON.stringify({ file: `app-${i}.log` });
      return {
        content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'read_log', input }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  let summaries = 0;
  const summarizer = new MockLanguageModelV4({
    doGenerate: async () =>
      text(
        summaries++ === 0
          ? 'Error generating summary: the summarizer is overloaded' // a failed summary
          : 'The agent is reading the service logs one by one with read_log; every file read so far holds only INFO lines for requests served in about 12 ms, and nothing failed.',
      ),
  });
  const guard = guardedCompaction({
    session: client.session(`ai-sdk-demo-${Date.now()}`),
    spill: new FileSpillStore(process.env.CG_SPILL_DIR ?? '.cache/spills'),
    summarizer, // one generateText call with a summary prompt
    triggerTokens: 20_000,
    summaryInputTokens: 4_000, // what the summarizer is shown: the latest whole messages
    onVerdict: (v) =>
      console.log(`verdict: ${v.decision} ${v.action} ${v.basis ?? ''} ${v.diagnostic ?? ''}`),
    onRefusal: (r) => console.log(`summary held back (${r.reason}), messages kept`),
  });
  const readLog = tool({
    description: 'Reads one log file',
    inputSchema: jsonSchema<{ file: string }>({
      type: 'object',
      properties: { file: { type: 'string' } },
      required: ['file'],
    }),
    execute: async ({ file }) => `${file}: ${'INFO served in 12 ms; '.repeat(180)}`,
  });
  const result = await generateText({
    model: agent,
    tools: { read_log: readLog },
    messages: [{ role: 'user', content: RULE }],
    stopWhen: isStepCount(30),
    prepareStep: guard.prepareStep,
  });
  const last = agent.doGenerateCalls[agent.doGenerateCalls.length - 1]!.prompt;
  const firstTexts = last.slice(0, 2).map((m) => JSON.stringify(m.content).slice(0, 70));
  console.log(`the model's last input starts with: ${firstTexts.join(' | ')}`);
  console.log(
    `the rule reached the model verbatim in its last call: ${JSON.stringify(last).includes(RULE)}`,
  );
  const c = guard.counts;
  console.log(
    `compactions: ${c.committed} committed, ${c.pinnedKept} pinned message(s) kept verbatim, held back: ${JSON.stringify(c.refused)}`,
  );
  console.log(`final answer: ${result.text}`);
  await client.close();
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
