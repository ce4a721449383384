/** The options both integrations take alike (LangChain's middleware, the AI SDK helper). */
import type { Pin } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import type { SpillStore } from '../../client/spill';
import type { OnRefusal } from './refusal';
import type { MinSummaryTokens } from './summaryCheck';

export interface GuardedSummaryOptions {
  /** Where the full history goes when the guard asks for a spill. */
  spill: SpillStore;
  /**
   * After an approved summary, put the messages whose turns carry these pins back verbatim
   * right after it, in their original order, once each (reported to the guard as new turns).
   * Default on: CONSTRAINT and PLAN; `false` turns it off; a list of pins chooses them.
   */
  keepPinned?: boolean | Pin[];
  /**
   * The least a summary may hold, in tokens (the integration's counter), given what its
   * summarizer read: a number, or a function of the tokens read. Default: one per hundred read,
   * at most 32. A shorter summary, an empty one, a known error text, or the output of a
   * summarizer call that threw is never committed (onRefusal is told the reason).
   */
  minSummaryTokens?: MinSummaryTokens;
  /**
   * A held-back summary: a callback (the run goes on with the history intact), or 'throw' (the
   * run fails with CompactionRefusedError, the history intact). `reason` says why (HALTED,
   * REFUSED, NO_VERDICT, EMPTY_SUMMARY, ERROR_SUMMARY, SUMMARIZER_THREW, SUMMARY_TOO_SHORT).
   * Default: `console.warn` of a HALT, once each, with the verdict's diagnostic and the on-call
   * commands (`haltWarning`); the other reasons are only counted. A callback given replaces it.
   */
  onRefusal?: OnRefusal;
  /** Verdict wait per request (ms); default the client's. */
  timeoutMs?: number;
  /** Told every verdict, the spill loop's intermediate REFUSE included (logs, metrics). */
  onVerdict?: (verdict: Verdict) => void;
}
