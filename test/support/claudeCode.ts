/**
 * The real Claude Code binary (the linux-x64 platform package of @anthropic-ai/claude-agent-sdk)
 * run headless, `claude -p <prompt> --output-format json [--resume <id>]`, in a temporary project
 * with a temporary HOME, against a local mock of the Messages API (test/support/mockAnthropic.ts).
 *
 * Its environment is built from nothing but what it needs, so it reaches only the mock: the
 * mock's URL and a dummy key, the switches that stop telemetry, non-essential traffic and the
 * auto-updater, and a proxy that goes nowhere but a local tripwire (`proxyTripwire`), so a
 * request to anywhere else fails and is counted instead of leaving the machine.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AgentSdkSpec, AgentSdkTurn } from './agentSdkSession';

const ROOT = path.resolve(__dirname, '../..');

/** Claude Code 2.1.337, the native binary the Agent SDK's platform package ships. */
export const CLAUDE_BIN = path.join(
  ROOT,
  'node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude',
);

/** What `--output-format json` prints: the session's result (only the fields tests read). */
export interface ClaudeResult {
  type: 'result';
  subtype: string;
  is_error: boolean;
  result?: string;
  session_id: string;
  num_turns?: number;
  [field: string]: unknown;
}

export interface ClaudeRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Killed after the timeout. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is the JSON result. */
  result: ClaudeResult | null;
}

/**
 * A CONNECT/HTTP proxy that answers nothing and records who asked: Claude Code's traffic to
 * anywhere but 127.0.0.1 goes through it (HTTPS_PROXY, NO_PROXY=127.0.0.1), so a test sees an
 * attempt to reach the internet as an entry here, not as a packet on the network.
 */
export class ProxyTripwire {
  readonly attempts: string[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ProxyTripwire> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const trip = new ProxyTripwire(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('connection', (socket: Socket) => {
      socket.once('data', (d: Buffer) => {
        trip.attempts.push(d.toString('latin1').split('\r\n')[0] ?? '');
        socket.destroy();
      });
      socket.on('error', () => undefined);
    });
    return trip;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A temporary project directory and HOME for one Claude Code session (or several). */
export class ClaudeProject {
  /** The project directory, resolved (Claude Code names its transcript folder after it). */
  readonly dir: string;
  readonly home: string;
  /** A directory put first on PATH, holding `compaction-guard` (this checkout's bin). */
  readonly bin: string;
  private readonly root: string;

  constructor(
    readonly mockUrl: string,
    readonly proxyUrl: string,
  ) {
    this.root = realpathSync(mkdtempSync(path.join(tmpdir(), 'cg-cc-')));
    this.dir = path.join(this.root, 'project');
    this.home = path.join(this.root, 'home');
    this.bin = path.join(this.root, 'bin');
    for (const d of [this.dir, this.home, this.bin]) mkdirSync(d);
    symlinkSync(
      path.join(ROOT, 'bin/compaction-guard.js'),
      path.join(this.bin, 'compaction-guard'),
    );
  }

  /** The environment Claude Code (and so its hooks) runs with, and `extra` over it. */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      PATH: [this.bin, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(
        path.delimiter,
      ),
      HOME: this.home,
      TMPDIR: tmpdir(),
      LANG: 'C.UTF-8',
      ANTHROPIC_BASE_URL: this.mockUrl,
      ANTHROPIC_API_KEY: 'sk-ant-dummy-key-for-a-local-mock',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      HTTPS_PROXY: this.proxyUrl,
      HTTP_PROXY: this.proxyUrl,
      https_proxy: this.proxyUrl,
      http_proxy: this.proxyUrl,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
      ...extra,
    };
  }

  /** Writes `.claude/settings.json` of the project (a test's own hooks). */
  writeSettings(settings: unknown): void {
    mkdirSync(path.join(this.dir, '.claude'), { recursive: true });
    writeFileSync(path.join(this.dir, '.claude/settings.json'), JSON.stringify(settings, null, 2));
  }

  /** The project's `.claude/settings.json`, parsed (null when absent). */
  settings(): unknown {
    const file = path.join(this.dir, '.claude/settings.json');
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
  }

  /**
   * The transcript of a session: `~/.claude/projects/<project dir, each non-alphanumeric as
   * ->/<session id>.jsonl`, found by its name rather than by re-deriving the folder's.
   */
  transcriptPath(sessionId: string): string {
    const projects = path.join(this.home, '.claude/projects');
    for (const folder of existsSync(projects) ? readdirSync(projects) : []) {
      const file = path.join(projects, folder, `${sessionId}.jsonl`);
      if (existsSync(file)) return file;
    }
    throw new Error(`no transcript of session ${sessionId} under ${projects}`);
  }

  /** The transcript's lines, each with its trailing newline, exactly as on disk. */
  transcriptLines(sessionId: string): string[] {
    return readFileSync(this.transcriptPath(sessionId), 'utf8')
      .split(/(?<=\n)/)
      .filter((l) => l !== '');
  }

  /** `claude -p <prompt> --output-format json`, resuming `resume` when given. */
  run(
    prompt: string,
    o: { resume?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
  ): Promise<ClaudeRun> {
    if (!existsSync(CLAUDE_BIN))
      throw new Error(
        `${CLAUDE_BIN}: missing (the linux-x64 package of @anthropic-ai/claude-agent-sdk, an optional dependency): these tests need the real binary`,
      );
    const args = ['-p', prompt, '--output-format', 'json'];
    if (o.resume !== undefined) args.push('--resume', o.resume);
    return runProcess(CLAUDE_BIN, args, this.dir, this.env(o.env), o.timeoutMs ?? 90_000);
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Runs a command in its own process group and kills the whole group (hooks included) when it
 * outlives `timeoutMs`.
 */
export function runProcess(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ClaudeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, timedOut, stdout, stderr, result: resultOf(stdout) });
    });
  });
}

function resultOf(stdout: string): ClaudeResult | null {
  try {
    const v = JSON.parse(stdout) as ClaudeResult;
    return v?.type === 'result' ? v : null;
  } catch {
    return null;
  }
}

/**
 * ./agentSdkSession.ts in its own process, `env` its whole environment (the guard's connection
 * for `guard` hooks, CG_TEST_SDK_SPEC added): its turns, or a throw with its output.
 */
export async function runAgentSdk(
  spec: AgentSdkSpec,
  env: NodeJS.ProcessEnv,
  timeoutMs = 240_000,
): Promise<AgentSdkTurn[]> {
  const r = await runProcess(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'agentSdkSession.ts')],
    ROOT,
    { PATH: process.env.PATH, ...env, CG_TEST_SDK_SPEC: JSON.stringify(spec) },
    timeoutMs,
  );
  if (r.exitCode !== 0)
    throw new Error(
      `agentSdkSession: exit ${r.exitCode} (timed out: ${r.timedOut})\n${r.stdout}\n${r.stderr}`,
    );
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AgentSdkTurn);
}

/** A transcript line parsed (the fields tests read). */
export interface TranscriptEntry {
  type: string;
  subtype?: string;
  uuid?: string;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  message?: { role: string; content: string | { type: string; text?: string }[] };
  [field: string]: unknown;
}

export function entryOf(line: string): TranscriptEntry {
  return JSON.parse(line) as TranscriptEntry;
}
