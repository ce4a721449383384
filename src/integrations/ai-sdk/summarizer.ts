/**
 * The summarizer: a function the user gives, or a model asked once with `generateText` and a
 * summary prompt (the default). What it is shown is exactly the messages it is given, so the
 * guard is told exactly what it saw.
 */
import { generateText, type LanguageModel, type ModelMessage } from 'ai';
import { readableText } from './messages';

export interface SummarizerInput {
  /** The messages to summarize (an earlier summary first, when it is among them). */
  messages: ModelMessage[];
  /** The same messages as one readable text ("User: …", "Tool read_log: …"). */
  text: string;
}

/** Writes the summary of what it is given. */
export type Summarizer = (input: SummarizerInput) => string | Promise<string>;

export const DEFAULT_SUMMARY_INSTRUCTIONS = `You compact an agent's conversation. The messages below will be replaced by what you write.
Write the context the agent needs to carry on: the user's goal and every rule or constraint the user stated (word for word), decisions made, work done and its results, and what is left to do.
Answer with that context only.`;

/** "User: …", "Assistant: …", "Tool: …", one message a paragraph. */
export function readableTranscript(messages: readonly ModelMessage[]): string {
  const who = { system: 'System', user: 'User', assistant: 'Assistant', tool: 'Tool' } as const;
  return messages.map((m) => `${who[m.role]}: ${readableText(m)}`).join('\n\n');
}

/** The summarizer to call: the function given, or one `generateText` call on the model given. */
export function summarizerOf(
  given: LanguageModel | Summarizer,
  instructions = DEFAULT_SUMMARY_INSTRUCTIONS,
): Summarizer {
  if (typeof given === 'function') return given;
  return async ({ text }) => {
    const result = await generateText({ model: given, instructions, prompt: text });
    return result.text;
  };
}
