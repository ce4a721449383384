/** The summary message's text: a prefix, a blank line, the summary (langchain writes it so). */

/** langchain's prefix (DEFAULT_SUMMARY_PREFIX there, not exported): both integrations write it. */
export const DEFAULT_SUMMARY_PREFIX = 'Here is a summary of the conversation to date:';

export function withSummaryPrefix(prefix: string, summary: string): string {
  return `${prefix}\n\n${summary.trim()}`;
}

/** The summary's own text, the prefix taken off (a text without it is all summary). */
export function withoutSummaryPrefix(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}
