/**
 * `compaction-guard/langchain`: langchain v1 `createAgent` support (README, "Integrating an
 * orchestrator"). Needs the optional peer dependencies `langchain` and `@langchain/core`.
 */
export {
  CompactionRefusedError,
  guardedSummarization,
  LANGCHAIN_DEFAULT_TRIM_TOKENS,
} from './middleware';
export type { GuardRefusal, GuardRuntime, GuardedSummarizationOptions } from './middleware';
export { defaultPins, roleOf, RULE_WORDS } from './pins';
export type { ClassifyContext, PinClassifier } from './pins';
