/** What both integrations export alike (their index.ts re-export it). */
export {
  CompactionCounts,
  CompactionRefusedError,
  describeRefusal,
  REFUSAL_REASONS,
} from './refusal';
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
