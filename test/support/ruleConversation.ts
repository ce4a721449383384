/**
 * The conversation of the constraint tests: a rule in the first user message, then many tool
 * rounds that each read a long log (~1,000 tokens), and summaries that leave the rule out (the
 * approved summary that silently drops the user's rule).
 */
export const RULE = 'You must never delete anything under /prod. Check the log files one by one.';

/** ~1,000 tokens of log for one file. */
export function logOf(file: string): string {
  return `${file}: ${'INFO request served in 12 ms; '.repeat(130)}`;
}

/** A summary as a summarizer writes one (long enough for what it read), without the rule. */
export function summaryOf(i: number): string {
  return `Summary ${i}: the agent is reading the service's log files one by one with read_log. Every file read so far holds only INFO lines for requests served in about 12 ms; no error, warning or failed request was found, and nothing was changed.`;
}

/** How often the rule reached the model verbatim after each compaction. */
export interface Survival {
  /** Compactions seen by the model (distinct summaries in its inputs). */
  compactions: number;
  /** Compactions after which every model call still held the rule as a message of its own. */
  ruleKept: number;
  /** The most copies of the rule one model call received. */
  mostCopies: number;
}

/**
 * Per model call: the summary it saw (null before the first) and how many of its messages were
 * the rule, verbatim. Each distinct summary is one compaction; it kept the rule if every call
 * made under it held the rule.
 */
export function survival(calls: readonly { summary: string | null; rules: number }[]): Survival {
  const bySummary = new Map<string, boolean>();
  for (const c of calls) {
    if (c.summary === null) continue;
    bySummary.set(c.summary, (bySummary.get(c.summary) ?? true) && c.rules > 0);
  }
  return {
    compactions: bySummary.size,
    ruleKept: [...bySummary.values()].filter(Boolean).length,
    mostCopies: Math.max(0, ...calls.map((c) => c.rules)),
  };
}
