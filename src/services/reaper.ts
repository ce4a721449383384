/**
 * What our exit hooks cannot undo, undone by a process that outlives us: after a SIGKILL (a
 * jest worker killed, an out-of-memory kill, a CI timeout) no hook runs, and the JVMs we start
 * in their own process groups, the processor children of the fault tests, their temp dirs and
 * the cluster's network namespaces would stay behind. testcontainers has Ryuk for this; here it
 * is one small Node process per owner, started on first use, in its own process group (a
 * Ctrl-C or a kill of our group does not reach it). It reads what to clean up from a pipe, one
 * JSON line per change, and acts when the pipe closes: the kernel closes it when we die,
 * however we die. An owner that cleans up itself tells it to forget each thing first.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Something to undo when the owner dies. */
export type Leftover =
  | { kind: 'group'; pgid: number }
  | { kind: 'process'; pid: number }
  | { kind: 'dir'; path: string }
  | { kind: 'command'; argv: string[] };

/**
 * The reaper's program, plain JavaScript for `node -e` (it must run the same from the
 * TypeScript sources under jest and from dist/). At the end of its input it kills processes
 * first (they may hold the dirs and namespaces), then runs the commands last-registered first
 * (a namespace before the bridge it hangs on), then deletes the dirs; every step best effort.
 */
const REAPER_PROGRAM = `
const { execFileSync } = require('node:child_process');
const { rmSync } = require('node:fs');
process.title = 'compaction-guard-reaper';
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const pending = new Map();
let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf('\\n')) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    try {
      const m = JSON.parse(line);
      if (m.op === 'add') pending.set(m.id, m.leftover);
      else pending.delete(m.id);
    } catch {}
  }
});
process.stdin.on('end', () => {
  const all = [...pending.values()];
  const attempt = (f) => { try { f(); } catch {} };
  for (const l of all) {
    if (l.kind === 'group') attempt(() => process.kill(-l.pgid, 'SIGKILL'));
    if (l.kind === 'process') attempt(() => process.kill(l.pid, 'SIGKILL'));
  }
  for (const l of all.reverse()) {
    if (l.kind === 'command') attempt(() => execFileSync(l.argv[0], l.argv.slice(1), { stdio: 'ignore', timeout: 10000 }));
  }
  for (const l of all) {
    if (l.kind === 'dir') attempt(() => rmSync(l.path, { recursive: true, force: true }));
  }
  process.exit(0);
});
`;

let reaper: ChildProcess | undefined;
let nextId = 1;

function send(message: object): void {
  reaper?.stdin?.write(`${JSON.stringify(message)}\n`);
}

function started(): ChildProcess | undefined {
  if (reaper !== undefined) return reaper;
  const child = spawn(process.execPath, ['-e', REAPER_PROGRAM], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.once('error', () => {
    // Cannot start one (no process left to spawn?): the exit hooks are all there is.
    if (reaper === child) reaper = undefined;
  });
  // It must not keep us alive: neither the process nor the pipe to it.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.stdin?.on('error', () => undefined);
  reaper = child;
  return child;
}

/**
 * Registers `leftover` to be undone if we die without undoing it; returns the function that
 * unregisters it (call it once it is undone, so a reused pid or path is never touched).
 */
export function undoIfWeDie(leftover: Leftover): () => void {
  if (started() === undefined) return () => undefined;
  const id = nextId++;
  send({ op: 'add', id, leftover });
  let done = false;
  return () => {
    if (done) return;
    done = true;
    send({ op: 'forget', id });
  };
}

/**
 * `child` (not in a process group of its own, e.g. a processor a test or bench starts) killed
 * if we die while it runs; forgotten once it has exited.
 */
export function killIfWeDie(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  // 'close' (after 'exit'): callers may remove their own 'exit' listeners wholesale.
  child.once('close', undoIfWeDie({ kind: 'process', pid: child.pid }));
}

/** The reaper's pid, for tests that check it acts. */
export function reaperPid(): number | undefined {
  return reaper?.pid;
}
