/**
 * `compaction-guard hook claude-code`: one Claude Code hook call. The hook input (JSON) on
 * stdin; the answer on stdout in Claude Code's hook output form, exit 0; logs on stderr only.
 * A malformed input is named on stderr and exits 2 (Claude Code blocks a PreCompact on exit 2),
 * except a Stop's, which exits 0 (exit 2 there would keep the assistant from stopping).
 * Never throws: whatever fails is the guard-down answer (handlers.ts).
 */
import pino, { type Logger } from 'pino';
import { GuardClient } from '../client/client';
import { handleHook } from '../integrations/claude-code/handlers';
import { HookInputError, parseHookInput } from '../integrations/claude-code/input';
import { resolveClaudeCodeOptions } from '../integrations/claude-code/options';
import { hookOutput } from '../integrations/claude-code/output';
import type { ClaudeHookInput, HookAnswer } from '../integrations/claude-code/hookTypes';

export interface HookIo {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
}

/** Exit status of a malformed hook input (Claude Code: a blocking error, stderr shown). */
export const HOOK_INPUT_EXIT = 2;

export async function runClaudeCodeHook(io: HookIo = {}): Promise<number> {
  const env = io.env ?? process.env;
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const log = hookLogger(env, io.stderr);
  let input: ClaudeHookInput | null;
  let raw: unknown = null;
  try {
    raw = JSON.parse(await readAll(io.stdin ?? process.stdin));
    input = parseHookInput(raw);
  } catch (e) {
    const message =
      e instanceof HookInputError ? e.message : `hook input: not JSON (${(e as Error).message})`;
    stderr.write(`compaction-guard: ${message}\n`);
    // A Stop hook's exit 2 would keep Claude Code from stopping: the guard never does that.
    if ((raw as { hook_event_name?: unknown } | null)?.hook_event_name === 'Stop') {
      await write(stdout, '{}\n');
      return 0;
    }
    return HOOK_INPUT_EXIT;
  }
  if (input === null) {
    await write(stdout, '{}\n');
    return 0;
  }
  const answer = await answerOf(input, env, log);
  await write(stdout, `${JSON.stringify(hookOutput(answer))}\n`);
  return 0;
}

/** The answer, with a client connected for this call only (closed before the answer is written). */
async function answerOf(
  input: ClaudeHookInput,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<HookAnswer> {
  let options;
  try {
    options = resolveClaudeCodeOptions({}, env);
  } catch (e) {
    // A malformed CG_CLAUDE_* setting: named, and the compaction is not let through unguarded.
    const reason = `compaction-guard: ${(e as Error).message}`;
    log.error({ err: e }, 'invalid setting');
    return input.hook_event_name === 'PreCompact'
      ? { kind: 'block', reason }
      : { kind: 'allow', systemMessage: reason };
  }
  let client: GuardClient | null = null;
  const connect = async (): Promise<GuardClient> => {
    if (client === null) {
      client = new GuardClient({ env, verdictTimeoutMs: options.verdictTimeoutMs, logger: log });
      await client.connect();
    }
    return client;
  };
  try {
    return await handleHook({ client: connect, options, now: Date.now, log }, input);
  } finally {
    await (client as GuardClient | null)
      ?.close()
      .catch((e: unknown) => log.warn({ err: e }, 'closing the client failed'));
  }
}

/** pino on stderr at CG_LOG_LEVEL (default warn): stdout is the hook's answer. */
function hookLogger(env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream | undefined): Logger {
  const level = env.CG_LOG_LEVEL ?? 'warn';
  return pino({ level, base: { hook: 'claude-code' } }, stderr ?? pino.destination(2));
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    stream.write(text, () => resolve());
  });
}
