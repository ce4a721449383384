/**
 * What Claude Code's hooks hand a guard and what the guard answers, independent of how the hook
 * runs: a command (`compaction-guard hook claude-code`, one process per call) or an Agent SDK
 * callback (one process for the whole session). Only the fields the guard reads are typed; the
 * SDK's own types (sdk.d.ts of @anthropic-ai/claude-agent-sdk) are the authority for the rest.
 */
import type { Logger } from 'pino';
import type { GuardClient } from '../../client/client';

interface BaseHookInput {
  session_id: string;
  /** The session's transcript, JSON lines, appended to by Claude Code. */
  transcript_path: string;
  cwd: string;
}

export interface PreCompactInput extends BaseHookInput {
  hook_event_name: 'PreCompact';
  trigger: 'manual' | 'auto';
  custom_instructions: string | null;
}

export interface PostCompactInput extends BaseHookInput {
  hook_event_name: 'PostCompact';
  trigger: 'manual' | 'auto';
  compact_summary: string;
}

export interface SessionStartInput extends BaseHookInput {
  hook_event_name: 'SessionStart';
  source: 'startup' | 'resume' | 'clear' | 'compact' | 'fork';
}

/**
 * The assistant finished a response (sdk.d.ts: StopHookInput). The guard only reads the
 * transcript's new turns then, so that it sees them as they come and not only at compaction.
 */
export interface StopInput extends BaseHookInput {
  hook_event_name: 'Stop';
  /** Claude Code is continuing because of a Stop hook already (not the guard's: it never blocks). */
  stop_hook_active: boolean;
}

/** The hook events the guard handles. */
export type ClaudeHookInput = PreCompactInput | PostCompactInput | SessionStartInput | StopInput;

/**
 * The guard's answer to one hook call, before it is written in the runner's form:
 * - `allow`: the action goes ahead;
 * - `block`: PreCompact only, the compaction does not happen, `reason` says why;
 * - `context`: SessionStart only, `additionalContext` is added to the model's context.
 * `systemMessage` is shown to the user.
 */
export type HookAnswer =
  | { kind: 'allow'; systemMessage?: string }
  | { kind: 'block'; reason: string; systemMessage?: string }
  | { kind: 'context'; additionalContext: string; systemMessage?: string };

/** What a handler needs from the runner around it. */
export interface HookRuntime<Options> {
  /** A connected client (the command connects one per call; the SDK module keeps one). */
  client(): Promise<GuardClient>;
  options: Options;
  /** The clock (events' occurredAt, block windows). */
  now: () => number;
  /** Where the guard's own lines go: stderr for the command, since stdout is the answer. */
  log: Logger;
}
