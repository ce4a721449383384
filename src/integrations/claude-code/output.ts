/**
 * A HookAnswer in Claude Code's hook output form (the hooks docs; SyncHookJSONOutput in the
 * Agent SDK's sdk.d.ts): the command prints it on stdout with exit 0, an Agent SDK callback
 * returns it.
 */
import type { HookAnswer } from './hookTypes';

export interface HookOutput {
  decision?: 'block';
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: { hookEventName: 'SessionStart'; additionalContext: string };
}

export function hookOutput(answer: HookAnswer): HookOutput {
  const message = answer.systemMessage !== undefined ? { systemMessage: answer.systemMessage } : {};
  switch (answer.kind) {
    case 'allow':
      return message;
    case 'block':
      return { decision: 'block', reason: answer.reason, ...message };
    case 'context':
      return {
        hookSpecificOutput: {
          hookEventName: 'SessionStart',
          additionalContext: answer.additionalContext,
        },
        ...message,
      };
  }
}
