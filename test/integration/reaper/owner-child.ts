/**
 * An owner of leftovers for test/integration/reaper.test.ts: it starts a process group (as
 * the local services start a JVM), a plain child (as the fault tests start a processor), a
 * temp dir and, given a namespace name, a network namespace; prints them as one JSON line;
 * then either waits to be killed (`wait`) or cleans up itself and exits (`exit`).
 */
import { spawn, execFileSync } from 'node:child_process';
import { makeTempDir, removeTempDir, startProcess } from '../../../src/services/processes';
import { killIfWeDie, reaperPid, undoIfWeDie } from '../../../src/services/reaper';

async function main(): Promise<void> {
  const [mode, namespace] = process.argv.slice(2);
  const group = startProcess({ name: 'sleeper', command: 'sleep', args: ['600'] });
  const plain = spawn('sleep', ['600'], { stdio: 'ignore' });
  killIfWeDie(plain);
  const dir = makeTempDir('cg-reaper-test-');
  let forgetNamespace = (): void => undefined;
  if (namespace !== undefined && namespace !== '') {
    execFileSync('ip', ['netns', 'add', namespace]);
    forgetNamespace = undoIfWeDie({ kind: 'command', argv: ['ip', 'netns', 'del', namespace] });
  }
  process.stdout.write(
    `${JSON.stringify({ group: group.pid, plain: plain.pid, dir, reaper: reaperPid() })}\n`,
  );
  if (mode === 'exit') {
    await group.stop(2_000);
    plain.kill('SIGKILL');
    removeTempDir(dir);
    if (namespace) execFileSync('ip', ['netns', 'del', namespace]);
    forgetNamespace();
    return;
  }
  setInterval(() => undefined, 60_000);
}

void main();
