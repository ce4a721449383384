/**
 * `compaction-guard/ai-sdk`: guarded compaction for the Vercel AI SDK, `ai` 7.x (docs/integration.md,
 * "Vercel AI SDK"). Needs the optional peer dependency `ai`.
 */
export { DEFAULT_KEEP_MESSAGES, DEFAULT_SUMMARY_PREFIX, guardedCompaction } from './guard';
export type { GuardedCompaction, GuardedCompactionOptions } from './guard';
export { approximateTokens, defaultPins, roleOf } from './messages';
export type { ClassifyContext, PinClassifier, TokenCounter } from './messages';
export { DEFAULT_SUMMARY_INSTRUCTIONS, readableTranscript } from './summarizer';
export type { Summarizer, SummarizerInput } from './summarizer';
export * from '../compaction/public';
