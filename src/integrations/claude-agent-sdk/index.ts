/**
 * `compaction-guard/claude-agent-sdk`: the Claude Code guard as hook callbacks of the Agent
 * SDK's `query({ options: { hooks } })`, one process for the whole session (the client is the
 * caller's, kept open). The SDK is an optional peer: its types only are imported, nothing of it
 * is loaded at run time.
 */
import type {
  HookCallback,
  HookCallbackMatcher,
  HookEvent,
  HookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';
import pino, { type Logger } from 'pino';
import type { GuardClient } from '../../client/client';
import { handleHook } from '../claude-code/handlers';
import { parseHookInput } from '../claude-code/input';
import { type ClaudeCodeGuardOptions, resolveClaudeCodeOptions } from '../claude-code/options';
import { hookOutput } from '../claude-code/output';

export interface GuardedHooksOptions extends ClaudeCodeGuardOptions {
  /** A connected GuardClient (the caller opens and closes it). */
  client: GuardClient;
  /** Where the guard logs; default pino at warn on stderr. */
  logger?: Logger;
  /** Environment the CG_CLAUDE_* defaults are read from; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The `hooks` for `query({ options: { hooks } })`: PreCompact, PostCompact, SessionStart and
 * Stop, as the command `compaction-guard hook claude-code` answers them (options given here win
 * over the CG_CLAUDE_* env vars). The Stop callback reports the response's new turns and
 * answers `{}`, whatever fails (logged); it is awaited, which costs a response's few turns.
 */
export function guardedHooks(
  options: GuardedHooksOptions,
): Partial<Record<HookEvent, HookCallbackMatcher[]>> {
  const { client, logger, env, ...given } = options;
  const runtime = {
    client: () => Promise.resolve(client),
    options: resolveClaudeCodeOptions(given, env ?? process.env),
    now: Date.now,
    log: logger ?? pino({ level: 'warn' }, pino.destination(2)),
  };
  const callback: HookCallback = async (input): Promise<HookJSONOutput> => {
    let parsed;
    try {
      parsed = parseHookInput(input);
    } catch (e) {
      // A malformed PreCompact input is not let through unguarded (the command exits 2 for it).
      runtime.log.error({ err: e }, 'malformed hook input');
      const reason = `compaction-guard: ${(e as Error).message}`;
      return input.hook_event_name === 'PreCompact' ? { decision: 'block', reason } : {};
    }
    if (parsed === null) return {};
    return hookOutput(await handleHook(runtime, parsed)) as HookJSONOutput;
  };
  return {
    PreCompact: [{ hooks: [callback] }],
    PostCompact: [{ hooks: [callback] }],
    SessionStart: [{ hooks: [callback] }],
    Stop: [{ hooks: [callback] }],
  };
}

export type { ClaudeCodeGuardOptions } from '../claude-code/options';
