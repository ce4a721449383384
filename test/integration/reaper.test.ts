/** src/services/reaper.ts: what an owner killed with SIGKILL leaves is undone without it, and an
 * owner that cleans up itself leaves no reaper behind. Real processes, dirs and namespaces. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { netnsAvailable } from '../../src/services/localCluster';

const OWNER = join(__dirname, 'reaper', 'owner-child.ts');

interface Owned {
  group: number;
  plain: number;
  dir: string;
  reaper: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed child of a dead owner is reaped by init at once, but a zombie would still answer.
  try {
    return !/^State:\s+Z/m.test(execFileSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }));
  } catch {
    return false;
  }
}

function namespaces(): string {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startOwner(
  mode: 'wait' | 'exit',
  namespace: string,
): Promise<{ owned: Owned; exited: Promise<void>; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', OWNER, mode, namespace], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`owner exited (${code}) before reporting`)));
  });
  return { owned: JSON.parse(line) as Owned, exited, pid: child.pid! };
}

const withNetns = netnsAvailable();
const nsName = (tag: string): string => (withNetns ? `cgreap${process.pid % 10_000}${tag}` : '');

describe('the reaper', () => {
  it('undoes a SIGKILLed owner’s process group, plain child, temp dir and namespace', async () => {
    const ns = nsName('k');
    const { owned, exited, pid } = await startOwner('wait', ns);
    expect(alive(owned.group)).toBe(true);
    expect(alive(owned.plain)).toBe(true);
    expect(existsSync(owned.dir)).toBe(true);
    if (withNetns) expect(namespaces()).toContain(ns);

    process.kill(pid, 'SIGKILL');
    await exited;

    await until('the process group to be killed', () => !alive(owned.group));
    await until('the plain child to be killed', () => !alive(owned.plain));
    await until('the temp dir to be deleted', () => !existsSync(owned.dir));
    if (withNetns) await until('the namespace to be deleted', () => !namespaces().includes(ns));
    await until('the reaper to exit', () => !alive(owned.reaper));
  });

  it('leaves nothing running after an owner that cleaned up itself exits', async () => {
    const ns = nsName('e');
    const { owned, exited } = await startOwner('exit', ns);
    await exited;
    await until('the reaper to exit', () => !alive(owned.reaper));
    expect(alive(owned.group)).toBe(false);
    expect(existsSync(owned.dir)).toBe(false);
    if (withNetns) expect(namespaces()).not.toContain(ns);
  });
});
