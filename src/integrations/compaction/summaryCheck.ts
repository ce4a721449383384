/**
 * Summaries that must never replace a history: the summarizer failed or said nothing. A failed
 * summary committed in place of the messages is a silent loss of everything it stood for (a
 * framework that catches its summarizer's error and returns the error text as the summary).
 */

/** Why a summary was held back before the guard was even asked. */
export type DegenerateReason =
  'EMPTY_SUMMARY' | 'ERROR_SUMMARY' | 'SUMMARIZER_THREW' | 'SUMMARY_TOO_SHORT';

/**
 * Texts summarizers return instead of a summary (LangChain's summarization middleware returns
 * the first two when its model call fails or nothing fits its trim, the third when it was given
 * nothing). Matched at the start of the summary, case-insensitive.
 */
export const KNOWN_ERROR_TEXTS: readonly string[] = [
  'Error generating summary',
  'Previous conversation was too long to summarize',
  'No previous conversation history',
];

/** The least a summary may hold, in tokens, given what its summarizer read (in tokens). */
export type MinSummaryTokens = number | ((inputTokens: number) => number);

/** One token per hundred read, at most 32: a 2,000-token input needs a 20-token summary. */
export function defaultMinSummaryTokens(inputTokens: number): number {
  return Math.min(32, Math.floor(inputTokens / 100));
}

export function minTokensFor(min: MinSummaryTokens | undefined, inputTokens: number): number {
  if (min === undefined) return defaultMinSummaryTokens(inputTokens);
  return typeof min === 'function' ? min(inputTokens) : min;
}

export interface SummaryFacts {
  /** The summary's own text (without any prefix the integration adds). */
  text: string;
  /** Whether the summarizer call threw (whatever text came out of it then). */
  threw: boolean;
  /** The summary's size, counted as the integration counts messages. */
  summaryTokens: number;
  /** The least it may hold for what its summarizer read. */
  minTokens: number;
}

function isErrorText(text: string): boolean {
  const lower = text.toLowerCase();
  return KNOWN_ERROR_TEXTS.some((e) => lower.startsWith(e.toLowerCase()));
}

/** The first reason the summary must not be committed, or null when it may be offered. */
export function degenerateSummary(f: SummaryFacts): DegenerateReason | null {
  if (f.threw) return 'SUMMARIZER_THREW';
  const text = f.text.trim();
  if (text.length === 0) return 'EMPTY_SUMMARY';
  if (isErrorText(text)) return 'ERROR_SUMMARY';
  if (f.summaryTokens < f.minTokens) return 'SUMMARY_TOO_SHORT';
  return null;
}
