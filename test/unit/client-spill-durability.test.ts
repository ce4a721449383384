/**
 * FileSpillStore's durability, seen in its system calls (strace): every directory it creates
 * has its parent fsynced after the mkdir; the spill's temp file is created 0600 and fsynced;
 * after the rename into place, the directory holding the spill is fsynced. Without those, a
 * crash can lose a spill the guard has already been told about (SpillCompleted).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const SCRIPT = path.join(__dirname, '..', 'support', 'spill-write-once.ts');

interface Call {
  name: string;
  args: string;
  result: number;
}

/** strace -f output as calls in completion order (an `<unfinished ...>` call joined to its `resumed>` line). */
function parseStrace(text: string): Call[] {
  const pending = new Map<string, { name: string; args: string }>();
  const calls: Call[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, pid, rest] = m as unknown as [string, string, string];
    const unfinished = /^(\w+)\((.*) <unfinished \.\.\.>$/.exec(rest);
    if (unfinished) {
      pending.set(pid, { name: unfinished[1]!, args: unfinished[2]! });
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)\)\s+= (-?\d+)/.exec(rest);
    if (resumed) {
      const p = pending.get(pid);
      pending.delete(pid);
      calls.push({
        name: resumed[1]!,
        args: `${p?.args ?? ''}${resumed[2]!}`,
        result: Number(resumed[3]),
      });
      continue;
    }
    const whole = /^(\w+)\((.*)\)\s+= (-?\d+)/.exec(rest);
    if (whole) calls.push({ name: whole[1]!, args: whole[2]!, result: Number(whole[3]) });
  }
  return calls;
}

const firstString = (args: string): string => /"([^"]*)"/.exec(args)?.[1] ?? '';

describe('FileSpillStore durability (system calls)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-spill-strace-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fsyncs the parent of each directory it creates, the temp file, and the directory after the rename', () => {
    const root = path.join(dir, 'spills', 'store');
    const trace = path.join(dir, 'trace.txt');
    const run = spawnSync(
      'strace',
      [
        '-f',
        '-qq',
        '-o',
        trace,
        '-e',
        'trace=mkdir,mkdirat,openat,fsync,fdatasync,rename,renameat,renameat2',
        process.execPath,
        '--import',
        'tsx',
        SCRIPT,
        root,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect([run.error?.message, run.status, run.stderr]).toEqual([undefined, 0, '']);
    const calls = parseStrace(readFileSync(trace, 'utf8')).filter((c) => c.result >= 0);
    /** Path of each fd as last opened, at each point of the trace. */
    const fdPath = new Map<number, string>();
    const synced: { path: string; at: number }[] = [];
    const at = new Map<string, number>();
    calls.forEach((c, i) => {
      if (c.name === 'openat') fdPath.set(c.result, firstString(c.args));
      if (c.name === 'fsync' || c.name === 'fdatasync')
        synced.push({ path: fdPath.get(Number(c.args)) ?? '?', at: i });
      if (c.name === 'mkdir' || c.name === 'mkdirat') at.set(`mkdir ${firstString(c.args)}`, i);
      if (c.name.startsWith('rename')) at.set('rename', i);
    });
    const syncedAfter = (p: string, i: number) => synced.some((s) => s.path === p && s.at > i);

    const sessionDir = path.dirname(
      run.stdout
        .trim()
        .replace(/^file:\/\//, '')
        .split('#')[0]!,
    );
    const created = [path.join(dir, 'spills'), root, sessionDir];
    for (const d of created) {
      const made = at.get(`mkdir ${d}`);
      expect([d, made !== undefined]).toEqual([d, true]);
      expect([
        `parent of ${d} fsynced after its mkdir`,
        syncedAfter(path.dirname(d), made!),
      ]).toEqual([`parent of ${d} fsynced after its mkdir`, true]);
    }
    const temp = calls.find((c) => c.name === 'openat' && c.args.includes('.tmp'))!;
    expect(temp.args).toMatch(/O_CREAT\|O_EXCL.*, 0600$/);
    const renamed = at.get('rename')!;
    expect(synced.some((s) => s.path === firstString(temp.args) && s.at < renamed)).toBe(true);
    expect(syncedAfter(sessionDir, renamed)).toBe(true);
  });
});
