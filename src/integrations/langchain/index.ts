/**
 * `compaction-guard/langchain`: langchain v1 `createAgent` support (README, "Integrating an
 * orchestrator"). Needs the optional peer dependencies `langchain` and `@langchain/core`.
 */
export {
  guardedSummarization,
  LANGCHAIN_DEFAULT_SUMMARY_PREFIX,
  LANGCHAIN_DEFAULT_TRIM_TOKENS,
} from './middleware';
export type { GuardRuntime, GuardedSummarizationOptions } from './middleware';
export { defaultPins, roleOf, RULE_WORDS } from './pins';
export type { ClassifyContext, PinClassifier } from './pins';
export {
  CompactionCounts,
  CompactionRefusedError,
  describeRefusal,
  REFUSAL_REASONS,
} from '../compaction/refusal';
export type { GuardRefusal, OnRefusal, RefusalReason } from '../compaction/refusal';
export { DEFAULT_KEPT_PINS } from '../compaction/keepPinned';
export {
  defaultMinSummaryTokens,
  KNOWN_ERROR_TEXTS,
  type DegenerateReason,
  type MinSummaryTokens,
} from '../compaction/summaryCheck';
