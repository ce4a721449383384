/**
 * What the Claude Code hook costs on a long session: the first hook call that reads a
 * transcript of N turns (it reports every turn, persisting the ledger before each event is
 * sent), then a PreCompact on it (the request, the spill of every turn's line, the retry).
 * Against the broker and registry of KAFKA_BROKERS / SCHEMA_REGISTRY_URL and a real processor
 * with a key ring, as test/integration/claude-code-hooks.test.ts runs them.
 *
 * With `--ledger-only`, no broker: the ledger's writes alone, one per turn as `persist` makes
 * them, with a snapshot listing the turns as the client's does (what the write costs as the
 * session grows, without the broker's noise).
 *
 *   npm run bench:claude-hook -- [--ledger-only] [turns...]      (default 250 1000 2000)
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { handleHook, type ClaudeRuntime } from '../src/integrations/claude-code/handlers';
import {
  emptyLedger,
  ledgerFile,
  writeLedger,
  type ClaudeLedger,
} from '../src/integrations/claude-code/ledger';
import { resolveClaudeCodeOptions } from '../src/integrations/claude-code/options';
import { ClaudeTranscript, hookInput as hook } from '../test/support/claudeTranscript';

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

/** n turns reported one by one: a ledger write per turn, as `persist` does before each send. */
async function ledgerOnly(n: number): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-bench-ledger-'));
  try {
    const file = ledgerFile(dir, 'c37a7bb7-c9ae-462f-9484-6c9c68d5933b');
    const ledger = emptyLedger('c37a7bb7-c9ae-462f-9484-6c9c68d5933b');
    const tokenEnds: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const start = i * 400;
      ledger.turns.push({ uuid: `7f0c2d1e-${i}`, start, end: start + 400, role: 'USER', pins: [] });
      ledger.offset = start + 400;
      tokenEnds.push((tokenEnds.at(-1) ?? 0) + 100);
      ledger.snapshot = {
        version: 1,
        sessionId: ledger.sessionId,
        nextSeq: i + 2,
        policy: null,
        closed: false,
        verbatimStart: 0,
        tokenEnds,
        messageEnds: tokenEnds.map((_, j) => j + 1),
        pending: [],
      } as ClaudeLedger['snapshot'];
      await writeLedger(file, ledger);
    }
    const ms = performance.now() - t0;
    return `| ${n} | ${(ms / 1000).toFixed(2)} s | ${(ms / n).toFixed(2)} ms | ${stateFiles(dir)} |`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sizes = args.filter((a) => a !== '--ledger-only').map(Number);
  const counts = sizes.length > 0 ? sizes : [250, 1000, 2000];
  if (args.includes('--ledger-only')) {
    console.log('| turns | ledger writes | per turn | state files |\n|---|---|---|---|');
    for (const n of counts) console.log(await ledgerOnly(n));
    return;
  }
  // Loaded here: the harness reads KAFKA_BROKERS and SCHEMA_REGISTRY_URL when it loads.
  const { signedStack, testKeys } = await import('../test/integration/client/harness');
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
            hook(t, {
              hook_event_name: 'PreCompact',
              trigger: 'manual',
              custom_instructions: null,
            }),
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
