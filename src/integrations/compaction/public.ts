/** What both integrations export alike (their index.ts re-export it). */
export { CompactionCounts, describeRefusal, haltWarning, REFUSAL_REASONS } from './refusal';
export { CompactionRefusedError } from './refusedError';
export type { GuardRefusal, OnRefusal, RefusalReason } from './refusal';
export type { GuardedSummaryOptions } from './options';
export { DEFAULT_KEPT_PINS } from './keepPinned';
export {
  defaultMinSummaryTokens,
  KNOWN_ERROR_TEXTS,
  type DegenerateReason,
  type MinSummaryTokens,
} from './summaryCheck';
export { RULE_WORDS } from './ruleWords';
