/**
 * The README's quick start, as a newcomer types it: `npm start` (the embedded Kafka and
 * registry, real JVMs, a development signing key and ring), then in a second terminal
 * `simulate`, `tail`, `inspect` and `acknowledge` with no connection flags and no key setup,
 * then a stop. Afterwards no process of that start is left and its ports are free.
 *
 * Only two settings differ from a person's terminal, so that the test cannot collide with a
 * developer's own `npm start`: the HTTP port (CG_HTTP_PORT) and the state file
 * (CG_EMBEDDED_FILE, read by simulate and tail exactly as `.cache/embedded.json` would be).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, freePort, portIsFree, terminalEnv, waitFor } from './faults/harness';

const READY_TIMEOUT_MS = 240_000;
/**
 * Above the sum of the test's own bounds (the ready line, the verdicts, the stop, the end of
 * every process), so that a slow step fails with its name rather than jest's bare timeout. Alone
 * a case takes 30-40 s; beside a heavy suite it once took over the 120 s default.
 */
const TEST_TIMEOUT_MS = READY_TIMEOUT_MS + 90_000 + 60_000 + 30_000 + 60_000;

/** A fresh terminal's environment, plus `extra`. */
function newTerminal(extra: Record<string, string>): NodeJS.ProcessEnv {
  // The fetched Kafka/Apicurio distributions are shared with the rest of the suite.
  const cache = process.env.CG_CACHE_DIR ? { CG_CACHE_DIR: process.env.CG_CACHE_DIR } : {};
  return { ...terminalEnv(), ...cache, ...extra };
}

/** `npx compaction-guard ARGS` in the clone, to its end. */
function npx(args: string[], env: NodeJS.ProcessEnv): { status: number; stdout: string } {
  try {
    const stdout = execFileSync('npx', ['compaction-guard', ...args], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return { status: 0, stdout };
  } catch (e) {
    const err = e as { status: number | null; stdout?: string; stderr?: string };
    throw new Error(`npx compaction-guard ${args.join(' ')} failed (${err.status}): ${err.stderr}`);
  }
}

/** Every descendant pid of `pid` (children first found, then theirs). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let out = '';
    try {
      out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent)], { encoding: 'utf8' });
    } catch {
      continue; // ps exits 1 when there is no child
    }
    for (const p of out
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0)) {
      found.push(p);
      queue.push(p);
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const portOf = (hostPort: string) => Number(new URL(`tcp://${hostPort}`).port);

describe("the README's quick start on this clone", () => {
  let start: ChildProcess | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'cg-walkthrough-'));

  afterAll(() => {
    if (start && start.exitCode === null) {
      for (const p of descendants(start.pid!)) if (alive(p)) process.kill(p, 'SIGKILL');
      start.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['SIGTERM', 'Ctrl-C'] as const)(
    'npm start, simulate and tail (and inspect and acknowledge, no key setup) with no connection flags; %s leaves no process and frees every port',
    async (stop) => {
      const httpPort = await freePort();
      const stateFile = join(dir, 'embedded.json');
      const env = newTerminal({ CG_HTTP_PORT: String(httpPort), CG_EMBEDDED_FILE: stateFile });

      // Its own process group, as in a terminal (where Ctrl-C signals the whole group).
      start = spawn('npm', ['start'], {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let stdout = '';
      let stderr = '';
      start.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      start.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      const exited = new Promise<number | null>((resolve) =>
        start!.once('exit', (code) => resolve(code)),
      );

      await waitFor(
        'the ready line of npm start',
        async () => /compaction-guard ready: /.test(stdout + stderr) && existsSync(stateFile),
        READY_TIMEOUT_MS,
      );
      const readyLines = (stdout + stderr)
        .split('\n')
        .filter((l) => l.includes('compaction-guard ready: '));
      expect(readyLines).toHaveLength(1);
      const state = JSON.parse(readFileSync(stateFile, 'utf8')) as {
        brokers: string[];
        registryUrl: string;
        httpUrl: string;
        signingKeyFile: string;
        trustedKeysFile: string;
      };
      // The development key (contract §4b): both roles, the ring the processor trusts.
      expect(state.signingKeyFile).toBe(join(dir, 'dev-keys', 'development.key'));
      expect(statSync(state.signingKeyFile).mode & 0o777).toBe(0o600);
      expect(readyLines[0]).toContain(state.signingKeyFile);
      const ring = JSON.parse(readFileSync(state.trustedKeysFile, 'utf8')) as {
        keys: { name: string; roles: string[] }[];
      };
      expect(ring.keys).toEqual([
        expect.objectContaining({ name: 'development', roles: ['ACKNOWLEDGE', 'SPILL'] }),
      ]);
      expect(readyLines[0]).toContain(state.httpUrl);
      expect(readyLines[0]).toContain(state.brokers.join(','));
      expect(readyLines[0]).toContain(state.registryUrl);

      // The second terminal: the README's two commands, smaller.
      npx(['simulate', '--sessions', '10', '--events', '800', '--rate', '500'], env);
      let verdictLines: string[] = [];
      await waitFor(
        'verdicts on the verdict topic',
        async () => {
          const out = npx(['tail', 'verdicts', '--from-beginning', '--no-follow'], env).stdout;
          verdictLines = out.split('\n').filter((l) => /\b(APPROVE|REFUSE)\b/.test(l));
          return verdictLines.length > 0;
        },
        90_000,
      );
      expect(verdictLines.every((l) => /\bsim-/.test(l))).toBe(true);
      if (stop === 'SIGTERM') {
        // simulate signed its spill answers with the development key: none was refused.
        const audit = npx(['tail', 'audit', '--from-beginning', '--no-follow'], env).stdout;
        expect(audit).not.toContain('UNAUTHORIZED_EVENT');
        // inspect and acknowledge, as the README's demo has them, with no key given.
        const session = /\b(sim-\S+)/.exec(verdictLines[0]!)![1]!;
        const view = JSON.parse(npx(['inspect', session, '--json'], env).stdout) as {
          policy: { floor: { unit: string } };
          lastEventAt: number;
        };
        expect(view.lastEventAt).toBeGreaterThan(0);
        const acked = npx(
          [
            'acknowledge',
            '--session',
            session,
            '--unit',
            view.policy.floor.unit,
            '--range',
            '0-1',
            '--reason',
            'the README demo',
            '--yes',
          ],
          env,
        ).stdout;
        expect(acked).toMatch(new RegExp(`audit ${session} - ADVISORY LOSS_ACKNOWLEDGED`));
      }

      // Everything this start runs (sh, node, both JVMs) and every port it listens on.
      const pids = descendants(start.pid!);
      expect(pids.length).toBeGreaterThanOrEqual(3);
      const ports = [
        httpPort,
        ...state.brokers.map(portOf),
        Number(new URL(state.registryUrl).port),
      ];

      if (stop === 'SIGTERM')
        start.kill('SIGTERM'); // `kill <pid>` of the npm process
      else process.kill(-start.pid!, 'SIGINT'); // Ctrl-C: the terminal signals the whole group
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<string>(
          (r) => (timer = setTimeout(() => r('still running after 60 s'), 60_000)),
        ),
      ]);
      clearTimeout(timer);
      expect(code).toBe(0);
      await waitFor(
        'every process of the start to end',
        async () => pids.every((p) => !alive(p)),
        30_000,
      );
      for (const port of ports) expect(await portIsFree(port)).toBe(true);
      expect(existsSync(stateFile)).toBe(false);
      expect(stderr).not.toMatch(/^\s+at /m); // no stack trace anywhere in a healthy run
      // One Ctrl-C is one graceful stop, though the node process gets it twice (npm forwards it).
      expect(stdout).not.toContain('second signal');
      expect(stdout).toContain('"msg":"shutting down"');
    },
    TEST_TIMEOUT_MS,
  );
});
