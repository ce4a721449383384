/** An AI SDK tool loop of the rule conversation: `ai/test`'s mock model, no API key. */
import { jsonSchema, type ModelMessage, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { DEFAULT_SUMMARY_PREFIX } from '../../src/integrations/ai-sdk';
import { logOf, RULE, summaryOf } from './ruleConversation';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
type CallOptions = MockLanguageModelV4['doGenerateCalls'][number];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

export function textResult(text: string): GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: undefined },
    usage,
    warnings: [],
  };
}

/** The agent's model: `rounds` calls of read_log, then a final answer. */
export function scriptedAiModel(rounds: number) {
  let calls = 0;
  return new MockLanguageModelV4({
    doGenerate: async (): Promise<GenerateResult> => {
      const i = calls++;
      if (i >= rounds)
        return textResult(`All ${rounds} files checked; nothing under /prod was touched.`);
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call-${i}`,
            toolName: 'read_log',
            input: JSON.stringify({ file: `app-${i}.log` }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

/** A summarizer model whose summaries leave the rule out. */
export function aiSummaryModel() {
  let calls = 0;
  return new MockLanguageModelV4({ doGenerate: async () => textResult(summaryOf(calls++)) });
}

export const readLogTool = tool({
  description: 'Reads one log file',
  inputSchema: jsonSchema<{ file: string }>({
    type: 'object',
    properties: { file: { type: 'string' } },
    required: ['file'],
  }),
  execute: async ({ file }) => logOf(file),
});

function textOfPrompt(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as { type: string; text?: string }[])
    .map((p) => (p.type === 'text' ? (p.text ?? '') : ''))
    .join('');
}

/** What one model call received: its summary (if any) and how many of its messages were the rule. */
export function receivedByAiSdk(call: CallOptions) {
  const texts = call.prompt.map((m) => textOfPrompt(m.content));
  return {
    summary: texts.find((t) => t.startsWith(DEFAULT_SUMMARY_PREFIX)) ?? null,
    rules: texts.filter((t) => t === RULE).length,
  };
}

/** The rule, then `rounds` read_log calls with their results, as plain ModelMessages. */
export function ruleConversation(rounds: number): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: 'user', content: RULE }];
  for (let i = 0; i < rounds; i++) {
    const toolCallId = `call-${i}`;
    const file = `app-${i}.log`;
    messages.push(
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId, toolName: 'read_log', input: { file } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId,
            toolName: 'read_log',
            output: { type: 'text', value: logOf(file) },
          },
        ],
      },
    );
  }
  return messages;
}
