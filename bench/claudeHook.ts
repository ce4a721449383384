/**
 * What the Claude Code hook costs on a long session: the first hook call that reads a
 * transcript of N turns (it reports every turn, persisting the ledger before each event is
 * sent), then a PreCompact on it (the request, the spill of every turn's line, the retry).
 * Against the broker and registry of KAFKA_BROKERS / SCHEMA_REGISTRY_URL and a real processor
 * with a key ring, as test/integration/claude-code-hooks.test.ts runs them.
 *
 *   npm run bench:claude-hook -- [turns...]      (default 250 1000 2000)
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { handleHook, type ClaudeRuntime } from '../src/integrations/claude-code/handlers';
import type { ClaudeHookInput } from '../src/integrations/claude-code/hookTypes';
import { resolveClaudeCodeOptions } from '../src/integrations/claude-code/options';
import { ClaudeTranscript } from '../test/support/claudeTranscript';
import { signedStack, testKeys } from '../test/integration/client/harness';

/** One round is 4 turns: the user's question, a tool call, its result, the answer. */
function transcriptOf(file: string, turns: number): ClaudeTranscript {
  const t = new ClaudeTranscript(file);
  t.user('Rule: you must never delete anything under /prod.');
  for (let i = 0; t.turnLines.length < turns; i++) {
    t.user(`Please check log file ${i}.`);
    t.tool(`cat /var/log/app-${i}.log`, `INFO request ${i} served in 12 ms`);
    t.assistant(`Log file ${i} holds only INFO lines.`);
  }
  return t;
}

function hook(t: ClaudeTranscript, fields: Record<string, unknown>): ClaudeHookInput {
  return {
    session_id: t.sessionId,
    transcript_path: t.file,
    cwd: '/home/user/project',
    ...fields,
  } as unknown as ClaudeHookInput;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

/** The state directory's files and their sizes (the ledger's layout). */
function stateFiles(dir: string): string {
  return readdirSync(dir)
    .filter((f) => !f.startsWith('spills'))
    .map((f) => `${f.replace(/^[0-9a-f-]{36}/, '<session>')} ${statSync(path.join(dir, f)).size} B`)
    .join(', ');
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number);
  const counts = sizes.length > 0 ? sizes : [250, 1000, 2000];
  const s = await signedStack(testKeys());
  const rows: string[] = [];
  try {
    for (const n of counts) {
      const dir = mkdtempSync(path.join(tmpdir(), 'cg-bench-claude-'));
      try {
        const t = transcriptOf(path.join(dir, 'session.jsonl'), n);
        const stateDir = path.join(dir, 'state');
        const rt: ClaudeRuntime = {
          client: () => Promise.resolve(s.client),
          options: resolveClaudeCodeOptions({ stateDir, spillDir: path.join(dir, 'spills') }, {}),
          now: Date.now,
          log: pino({ level: 'warn' }),
        };
        const [started, follow] = await timed(() =>
          handleHook(rt, hook(t, { hook_event_name: 'SessionStart', source: 'resume' })),
        );
        const [compact, pre] = await timed(() =>
          handleHook(
            rt,
            hook(t, { hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: null }),
          ),
        );
        if (started.kind !== 'allow' || compact.kind !== 'allow')
          throw new Error(`unexpected answers ${JSON.stringify([started, compact])}`);
        const row = `| ${t.turnLines.length} | ${(follow / 1000).toFixed(2)} s | ${(pre / 1000).toFixed(2)} s | ${stateFiles(stateDir)} |`;
        console.log(row);
        rows.push(row);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await s.stop();
  }
  console.log(
    [
      '| turns | first call (follow) | PreCompact (request, spill, retry) | state files |',
      '|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
