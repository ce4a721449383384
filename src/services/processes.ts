import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { undoIfWeDie } from './reaper';
import { settledWithin, sleep } from '../time';

/** A long-running child (a JVM) whose output goes to a log file and which we must stop again. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Undefined when the output goes to our own stderr. */
  readonly logFile: string | undefined;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<void>;
  /** Set once the process has exited, e.g. "exit code 1" or "signal SIGKILL". */
  readonly exitedWith: string | undefined;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
  /** A signal to the whole process group (e.g. SIGKILL, SIGSTOP, SIGCONT for fault tests). */
  signal(signal: NodeJS.Signals): void;
}

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  /** Append stdout and stderr to this file; without it they go to our own stderr. */
  logFile?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_GRACE_MS = 20_000;
const live = new Set<ChildProcess>();
/** Each temp dir, with the function that tells the reaper it is gone. */
const tempDirs = new Map<string, () => void>();
const cleanups = new Set<() => void>();

/**
 * A synchronous clean-up (e.g. deleting network namespaces) that also runs if the process
 * exits without undoing it; returns the function that unregisters it again.
 */
export function onExitCleanup(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  installHooks();
  return () => cleanups.delete(cleanup);
}

/** A fresh temp dir (broker data, scratch files) that is deleted even if we never stop(). */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.set(dir, undoIfWeDie({ kind: 'dir', path: dir }));
  installHooks();
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.get(dir)?.();
  tempDirs.delete(dir);
}

/**
 * Starts a child in its own process group (`detached`), so that stop() can signal the whole
 * tree (a launcher script and the JVM it starts) with one kill(-pgid). Because the group is
 * separate, a Ctrl-C in the terminal would not reach it: the exit/signal hooks below kill what
 * is still running if the Node process ends without calling stop().
 */
export function startProcess(spec: ProcessSpec): ManagedProcess {
  let fd = 2; // our stderr
  if (spec.logFile !== undefined) {
    mkdirSync(dirname(spec.logFile), { recursive: true });
    fd = openSync(spec.logFile, 'a');
  }
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    if (fd !== 2) closeSync(fd); // the child holds its own copy of the descriptor
  }
  let exitedWith: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedWith = signal !== null ? `signal ${signal}` : `exit code ${String(code)}`;
      live.delete(child);
      resolve();
    });
    // A spawn failure (e.g. ENOENT) emits 'error' and no 'exit'; without a listener it would
    // crash the process, so it is recorded like an exit.
    child.once('error', (err) => {
      exitedWith ??= `spawn error: ${err.message}`;
      live.delete(child);
      resolve();
    });
  });
  if (child.pid === undefined) {
    throw new Error(`${spec.name}: could not start ${spec.command} (is it installed?)`);
  }
  const pid = child.pid;
  live.add(child);
  installHooks();
  const forget = undoIfWeDie({ kind: 'group', pgid: pid });
  void exited.then(forget);

  return {
    name: spec.name,
    pid,
    logFile: spec.logFile,
    exited,
    get exitedWith() {
      return exitedWith;
    },
    async stop(graceMs = DEFAULT_GRACE_MS) {
      if (exitedWith !== undefined) return;
      signalGroup(pid, 'SIGTERM');
      signalGroup(pid, 'SIGCONT'); // a paused (SIGSTOP) process only sees SIGTERM once resumed
      if (await settlesWithin(exited, graceMs)) return;
      process.stderr.write(`[services] ${spec.name} ignored SIGTERM for ${graceMs} ms: SIGKILL\n`);
      signalGroup(pid, 'SIGKILL');
      await settlesWithin(exited, 5_000);
    },
    signal(signal: NodeJS.Signals) {
      if (exitedWith === undefined) signalGroup(pid, signal);
    },
  };
}

export interface RunSpec {
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Where output goes: our own stderr (download progress the user should see) or a file. */
  output: 'stderr' | { logFile: string };
  timeoutMs: number;
}

/** Runs a command to completion; rejects on a non-zero exit or timeout, quoting its log tail. */
export async function runCommand(spec: RunSpec): Promise<void> {
  const what = `${spec.command} ${spec.args.join(' ')}`;
  const logFile = spec.output === 'stderr' ? undefined : spec.output.logFile;
  const proc = startProcess({ ...spec, name: spec.command, logFile });
  if (!(await settlesWithin(proc.exited, spec.timeoutMs))) {
    await proc.stop(2_000);
    throw new Error(`${what}: still running after ${spec.timeoutMs} ms${logTail(logFile)}`);
  }
  if (proc.exitedWith !== 'exit code 0') {
    throw new Error(`${what}: ${proc.exitedWith ?? 'unknown exit'}${logTail(logFile)}`);
  }
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Used in the timeout message. */
  what: string;
  /** Stop waiting at once if this process dies, quoting its log. */
  process?: ManagedProcess;
}

/** Polls `ready` until it returns true; errors thrown by `ready` count as "not yet". */
export async function waitUntil(ready: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = '';
  for (;;) {
    const proc = opts.process;
    if (proc?.exitedWith !== undefined) {
      throw new Error(
        `${proc.name} exited (${proc.exitedWith}) before ${opts.what}${logTail(proc.logFile)}`,
      );
    }
    try {
      if (await ready()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      const last = lastError === '' ? '' : ` (last error: ${lastError})`;
      const tail = proc === undefined ? '' : logTail(proc.logFile);
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${last}${tail}`,
      );
    }
    await sleep(opts.intervalMs ?? 250);
  }
}

/** Seconds since `startedAt` (a Date.now() value), for progress messages. */
export function seconds(startedAt: number): string {
  return ((Date.now() - startedAt) / 1000).toFixed(1);
}

/** The last lines of a log file, formatted to be appended to an error message. */
export function logTail(logFile: string | undefined, lines = 30): string {
  if (logFile === undefined || !existsSync(logFile)) return '';
  const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  return `\n--- last lines of ${logFile} ---\n${tail}`;
}

/** Deletes `*.log` files in `dir` last written more than `maxAgeMs` ago. */
export function pruneLogs(dir: string, maxAgeMs: number): void {
  if (!existsSync(dir)) return;
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    try {
      if (name.endsWith('.log') && statSync(file).mtimeMs < cutoff) rmSync(file, { force: true });
    } catch {
      // removed meanwhile by another run pruning the same directory
    }
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // already gone is fine
  }
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return settledWithin(
    promise.then(() => true as const),
    ms,
    false,
  );
}

let hooksInstalled = false;

/**
 * Last-resort cleanup so an interrupted run does not leave JVMs holding ports and memory:
 * on exit, SIGKILL every group still running (they are throwaway test services with temp data;
 * stop() is the graceful path) and delete their temp dirs. A terminating signal that another
 * handler takes (`run`'s, standalone.ts's, Jest's) is left to it: it stops the services
 * gracefully, after the processor that still uses them, and the exit hook catches whatever
 * it leaves. With no other handler, the signal would kill the process: clean up, then re-raise
 * it so the process dies of it.
 */
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const killAll = (): void => {
    for (const child of live) if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    live.clear();
    for (const dir of tempDirs.keys()) rmSync(dir, { recursive: true, force: true });
    tempDirs.clear();
    for (const cleanup of cleanups) {
      try {
        cleanup();
      } catch {
        // best effort: the process is exiting
      }
    }
    cleanups.clear();
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(signal) > 1) return;
      killAll();
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}
