/** A langchain `createAgent` agent of the rule conversation: fake models, no API key. */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from 'langchain';
import { logOf, RULE, summaryOf } from './ruleConversation';

/**
 * The agent's model: per conversation, `rounds` tool calls (of the logs from `first` on) then a
 * final answer.
 */
export function scriptedModel(rounds: number, conversations = 1, first = 0) {
  const model = fakeModel();
  for (let c = 0; c < conversations; c++) {
    // Explicit messages: respondWithTools would derive each call's content from the whole input.
    for (let i = first; i < first + rounds; i++)
      model.respond(
        new AIMessage({
          content: `Reading app-${i}.log`,
          tool_calls: [
            {
              name: 'read_log',
              args: { file: `app-${i}.log` },
              id: `call-${c}-${i}`,
              type: 'tool_call',
            },
          ],
        }),
      );
    model.respond(new AIMessage(`All ${rounds} files checked; nothing under /prod was touched.`));
  }
  return model;
}

/** A summarizer that answers `times` times, each summary without the rule. */
export function summaryModel(times = 10) {
  const summarizer = fakeModel();
  for (let i = 0; i < times; i++) summarizer.respond(new AIMessage(summaryOf(i)));
  return summarizer;
}

export const readLog = tool(async ({ file }: { file: string }) => logOf(file), {
  name: 'read_log',
  description: 'Reads one log file',
  schema: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
});

/** What one model call received: its summary (if any) and how many of its messages were the rule. */
export function receivedByLangchain(messages: readonly BaseMessage[]) {
  const summary = messages.find(
    (m) => (m.additional_kwargs as { lc_source?: string }).lc_source === 'summarization',
  );
  return {
    summary: summary ? String(summary.content) : null,
    rules: messages.filter((m) => m.content === RULE).length,
  };
}
