/**
 * `compaction-guard/langchain`: langchain v1 `createAgent` support (docs/integration.md,
 * "LangChain"). Needs the optional peer dependencies `langchain` and `@langchain/core`.
 */
export {
  guardedSummarization,
  LANGCHAIN_DEFAULT_SUMMARY_PREFIX,
  LANGCHAIN_DEFAULT_TRIM_TOKENS,
} from './middleware';
export type { GuardRuntime, GuardedSummarizationOptions } from './middleware';
export { defaultPins, roleOf } from './pins';
export type { ClassifyContext, PinClassifier } from './pins';
export * from '../compaction/public';
