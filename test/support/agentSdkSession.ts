/**
 * One Agent SDK session guarded by `compaction-guard/claude-agent-sdk`, run as its user runs it:
 * its own process (`node --import tsx test/support/agentSdkSession.ts`), a GuardClient from the
 * environment as for every client (KAFKA_BROKERS, SCHEMA_REGISTRY_URL, CG_SIGNING_KEY_FILE, the
 * topics), kept for the whole session, and `query()` of @anthropic-ai/claude-agent-sdk with the
 * guard's hooks, one call per prompt, each resuming the session the first one started.
 *
 * The spec comes in CG_TEST_SDK_SPEC (JSON): the project directory, the environment of the
 * Claude Code process (test/support/claudeCode.ts: it reaches only the mock), the prompts, and
 * the guard's options. One JSON line per prompt on stdout: `{ prompt, result }`, the SDK's
 * result message.
 */
import { query, type SDKResultMessage } from '@anthropic-ai/claude-agent-sdk';
import { GuardClient } from '../../src/client';
import { guardedHooks } from '../../src/integrations/claude-agent-sdk';
import { CLAUDE_BIN } from './claudeCode';

export interface AgentSdkSpec {
  cwd: string;
  env: Record<string, string | undefined>;
  prompts: string[];
  guard?: Record<string, unknown>;
}

export interface AgentSdkTurn {
  prompt: string;
  result: SDKResultMessage;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.CG_TEST_SDK_SPEC ?? '') as AgentSdkSpec;
  const client = new GuardClient();
  await client.connect();
  try {
    const hooks = guardedHooks({ client, ...spec.guard });
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
      const turn: AgentSdkTurn = { prompt, result };
      process.stdout.write(`${JSON.stringify(turn)}\n`);
    }
  } finally {
    await client.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
