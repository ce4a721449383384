/**
 * `compaction-guard/claude-code`: the guard of Claude Code's compaction hooks, for a runner of
 * its own (the command `compaction-guard hook claude-code` and the Agent SDK hooks use it).
 */
export { handleHook } from './handlers';
export type { ClaudeRuntime } from './handlers';
export { parseHookInput, HookInputError } from './input';
export { hookOutput } from './output';
export type { HookOutput } from './output';
export { resolveClaudeCodeOptions, claudePolicy, stateDirOf, spillStoreOf } from './options';
export type { ClaudeCodeGuardOptions, ResolvedClaudeCodeGuardOptions } from './options';
export { defaultClaudePins } from './pins';
export type { PinClassifier, PinContext } from './pins';
export { HookStateError, ledgerFile, readLedger } from './ledger';
export type { ClaudeLedger, LedgerTurn, PendingCompaction } from './ledger';
export { parseTranscript, classifyLine, completeLines } from './transcript';
export type { TranscriptEntry, TurnEntry, BoundaryEntry, LineRange } from './transcript';
export type * from './hookTypes';
