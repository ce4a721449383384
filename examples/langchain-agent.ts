/**
 * The seed's incident in LangChain, guarded: a `createAgent` agent with langchain's own
 * summarization at its defaults (keep 20 messages, trimTokensToSummarize 4000) and a fake model
 * (no API key), 25 tool rounds of long log output, and a rule in the first user message. Without
 * the guard the summarizer would only see the last ~4,000 tokens and the rule would vanish. The
 * first summary fails (langchain turns the error into the summary's text) and is held back; the
 * next is refused until the history is spilled, then committed, and the rule is put back
 * verbatim right after it (keepPinned).
 * Start the processor (`npm start`), then in another terminal:
 *
 *   npx tsx examples/langchain-agent.ts
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, tool } from 'langchain';
import { FileSpillStore, GuardClient } from 'compaction-guard/client';
import { guardedSummarization } from 'compaction-guard/langchain';

async function main(): Promise<void> {
  const client = new GuardClient(); // npm start's embedded Kafka, or KAFKA_BROKERS
  await client.connect();
  const model = fakeModel(); // the agent: read 25 logs, then answer
  for (let i = 0; i < 25; i++) {
    const call = {
      name: 'read_log',
      args: { file: `app-${i}.log` },
      id: `c${i}`,
      type: 'tool_call' as const,
    };
    model.respond(new AIMessage({ content: `Reading app-${i}.log`, tool_calls: [call] }));
  }
  model.respond(new AIMessage('All 25 logs read; nothing under /prod was touched.'));
  const summarizer = fakeModel();
  summarizer.respond(new Error('the summarizer is overloaded')); // a failed summary
  for (let i = 0; i < 5; i++)
    summarizer.respond(
      new AIMessage(
        'The agent is reading the service logs one by one with read_log; every file read so far holds only INFO lines for requests served in about 12 ms, and nothing failed.',
      ),
    );
  const readLog = tool(
    async ({ file }: { file: string }) => `${file}: ${'INFO served in 12 ms; '.repeat(180)}`,
    {
      name: 'read_log',
      description: 'Reads one log file',
      schema: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
    },
  );
  const guard = guardedSummarization({
    summarization: { model: summarizer, trigger: { tokens: 20_000 } }, // langchain's options
    session: client.session(`langchain-demo-${Date.now()}`),
    spill: new FileSpillStore(process.env.CG_SPILL_DIR ?? '.cache/spills'),
    onVerdict: (v) =>
      console.log(`verdict: ${v.decision} ${v.action} ${v.basis ?? ''} ${v.diagnostic ?? ''}`),
    onRefusal: (r) => console.log(`summary held back (${r.reason}), history intact`),
  });
  const agent = createAgent({ model, tools: [readLog], middleware: [guard] });
  const rule = 'You must never delete anything under /prod. Read the 25 logs one by one.';
  const result = await agent.invoke(
    { messages: [new HumanMessage(rule)] },
    { recursionLimit: 200 },
  );
  const [first, second] = result.messages;
  console.log(
    `${result.messages.length} messages in the agent's history; the first: ${String(first!.content).slice(0, 60)}`,
  );
  console.log(`the second, kept verbatim: ${String(second!.content)}`);
  const c = guard.counts;
  console.log(
    `compactions: ${c.committed} committed, ${c.pinnedKept} pinned message(s) kept verbatim, held back: ${JSON.stringify(c.refused)}`,
  );
  await client.close();
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
