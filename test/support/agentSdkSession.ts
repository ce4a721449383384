/**
 * One Agent SDK session, run as its user runs it: its own process (`node --import tsx
 * test/support/agentSdkSession.ts`) calling `query()` of @anthropic-ai/claude-agent-sdk once per
 * prompt, each resuming the session the first one started, with the Claude Code binary of the
 * SDK's platform package in the environment of test/support/claudeCode.ts (it reaches only the
 * mock). Its hooks are either
 * - `guard`: `guardedHooks` of `compaction-guard/claude-agent-sdk`, with a GuardClient from the
 *   environment as for every client (KAFKA_BROKERS, SCHEMA_REGISTRY_URL, CG_SIGNING_KEY_FILE,
 *   the topics), one for the whole session; or
 * - `record`: callbacks that only record their input and answer SessionStart with a marker (the
 *   harness's own check).
 *
 * The spec comes in CG_TEST_SDK_SPEC (JSON). One JSON line per prompt on stdout: the prompt, the
 * SDK's result message, and the hook inputs recorded during it (`record`; SessionStart answered
 * with `SDK-HOOK-OUTPUT-<source>`). Tests run it with `runAgentSdk` (./claudeCode.ts) and import
 * only its types: importing it runs it.
 */
import type {
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  SDKResultMessage,
} from '@anthropic-ai/claude-agent-sdk';
import { CLAUDE_BIN } from './claudeCode';

export interface AgentSdkSpec {
  hooks: 'guard' | 'record';
  cwd: string;
  env: Record<string, string | undefined>;
  prompts: string[];
  /** The guard's options besides its client (`guard`). */
  guard?: Record<string, unknown>;
}

export interface AgentSdkTurn {
  prompt: string;
  result: SDKResultMessage;
  hookInputs: HookInput[];
}

type Hooks = Partial<Record<HookEvent, HookCallbackMatcher[]>>;

/** What a recording SessionStart callback adds to the context. */
const recordedContext = (source: string) => `SDK-HOOK-OUTPUT-${source}`;

function recordingHooks(inputs: HookInput[]): Hooks {
  const record: HookCallbackMatcher = {
    hooks: [
      async (input) => {
        inputs.push(input);
        return input.hook_event_name === 'SessionStart'
          ? {
              hookSpecificOutput: {
                hookEventName: 'SessionStart',
                additionalContext: recordedContext(input.source),
              },
            }
          : {};
      },
    ],
  };
  return { PreCompact: [record], PostCompact: [record], SessionStart: [record] };
}

/** The guard's hooks and how to let go of its client. */
async function guardHooks(
  spec: AgentSdkSpec,
): Promise<{ hooks: Hooks; close: () => Promise<void> }> {
  const { GuardClient } = await import('../../src/client');
  const { guardedHooks } = await import('../../src/integrations/claude-agent-sdk');
  const client = new GuardClient();
  await client.connect();
  return { hooks: guardedHooks({ client, ...spec.guard }), close: () => client.close() };
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.CG_TEST_SDK_SPEC ?? '') as AgentSdkSpec;
  const { query } = await import('@anthropic-ai/claude-agent-sdk');
  const inputs: HookInput[] = [];
  const { hooks, close } =
    spec.hooks === 'guard'
      ? await guardHooks(spec)
      : { hooks: recordingHooks(inputs), close: async () => undefined };
  try {
    let resume: string | undefined;
    for (const prompt of spec.prompts) {
      let result: SDKResultMessage | undefined;
      const messages = query({
        prompt,
        options: {
          hooks,
          cwd: spec.cwd,
          env: spec.env,
          pathToClaudeCodeExecutable: CLAUDE_BIN,
          // The hooks are this process's callbacks only: no settings file adds its own.
          settingSources: [],
          ...(resume === undefined ? {} : { resume }),
        },
      });
      for await (const m of messages) if (m.type === 'result') result = m;
      if (result === undefined) throw new Error(`${JSON.stringify(prompt)}: no result message`);
      resume = result.session_id;
      const turn: AgentSdkTurn = { prompt, result, hookInputs: inputs.splice(0) };
      process.stdout.write(`${JSON.stringify(turn)}\n`);
    }
  } finally {
    await close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
