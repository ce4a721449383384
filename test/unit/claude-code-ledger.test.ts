/**
 * The Claude Code hook's per-session ledger (src/integrations/claude-code/ledger.ts, turnLog.ts):
 * read back as written, its head and its turns never disagreeing after a kill between any two
 * writes (or in the middle of one), a corrupt file named with what was expected, and
 * one hook call at a time per session (a stale lock taken over); and the hook's input and
 * output forms and settings.
 */
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  emptyLedger,
  HookStateError,
  ledgerFile,
  readLedger,
  turnLogFile,
  withLock,
  writeLedger,
  type ClaudeLedger,
  type LedgerTurn,
} from '../../src/integrations/claude-code/ledger';
import { HookInputError, parseHookInput } from '../../src/integrations/claude-code/input';
import { hookOutput } from '../../src/integrations/claude-code/output';
import { claudePolicy, resolveClaudeCodeOptions } from '../../src/integrations/claude-code/options';
import { ConfigError } from '../../src/config/settings';

const SESSION = 'c37a7bb7-c9ae-462f-9484-6c9c68d5933b';
const tmp = () => mkdtempSync(path.join(tmpdir(), 'cg-ledger-'));

describe('the ledger file', () => {
  it('reads back what was written, and nothing when there is none', async () => {
    const file = ledgerFile(tmp(), SESSION);
    expect(path.basename(file)).toBe(`${SESSION}.json`);
    expect(await readLedger(file, SESSION)).toBeNull();
    const ledger = {
      ...emptyLedger(SESSION),
      offset: 120,
      turns: [
        { uuid: 'u1', start: 0, end: 120, role: 'USER' as const, pins: ['CONSTRAINT' as const] },
      ],
      consecutiveBlocks: 2,
    };
    await writeLedger(file, ledger);
    expect(await readLedger(file, SESSION)).toEqual(ledger);
    // The temp file was renamed into place: only the head and the turns' log are left.
    expect(readdirSync(path.dirname(file)).sort()).toEqual([
      path.basename(file),
      path.basename(turnLogFile(file)),
    ]);
  });

  it('names a session id that is no plain file name by its hash', () => {
    expect(path.basename(ledgerFile('/s', '../x'))).toMatch(/^[0-9a-f]{64}\.json$/);
  });

  it('refuses a corrupt file, naming it and what was expected', async () => {
    const file = ledgerFile(tmp(), SESSION);
    writeFileSync(file, '{"version":1,');
    await expect(readLedger(file, SESSION)).rejects.toThrow(HookStateError);
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      `${file}: not a compaction-guard Claude Code session ledger (version 2): not JSON`,
    );
    writeFileSync(
      file,
      JSON.stringify({ ...emptyLedger(SESSION), version: 1, turns: [{ start: 5, end: 2 }] }),
    );
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      'turns[0]: expected {start, end, role, pins}',
    );
    writeFileSync(file, JSON.stringify(emptyLedger('another')));
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      `expected session ${SESSION}, got "another"`,
    );
  });
});

const turn = (i: number): LedgerTurn => ({
  uuid: `u${i}`,
  start: i * 100,
  end: i * 100 + 100,
  role: 'USER',
  pins: i === 0 ? ['CONSTRAINT'] : [],
});

/** A ledger of `n` turns whose snapshot says how many it lists (so a mismatch shows). */
function ledgerOf(base: ClaudeLedger, n: number, truncated: number[] = []): ClaudeLedger {
  while (base.turns.length > n) base.turns.pop();
  while (base.turns.length < n) base.turns.push(turn(base.turns.length));
  for (const i of truncated) base.turns[i]!.truncated = true;
  base.offset = n * 100;
  base.snapshot = { sessionId: SESSION, nextSeq: n } as unknown as ClaudeLedger['snapshot'];
  return base;
}

const listed = (l: ClaudeLedger | null) => [
  l?.turns.length,
  (l?.snapshot as { nextSeq: number } | null)?.nextSeq,
  l?.offset,
];

describe("the ledger's head and turns' log", () => {
  it('appends each turn once: the log grows by the new turns only', async () => {
    const file = ledgerFile(tmp(), SESSION);
    const ledger = ledgerOf(emptyLedger(SESSION), 3);
    await writeLedger(file, ledger);
    const first = readFileSync(turnLogFile(file));
    ledgerOf(ledger, 5);
    await writeLedger(file, ledger);
    await writeLedger(file, ledger);
    const second = readFileSync(turnLogFile(file));
    expect(second.subarray(0, first.length)).toEqual(first);
    expect(second.toString('utf8').trim().split('\n')).toHaveLength(5);
    expect(await readLedger(file, SESSION)).toEqual(ledger);
  });

  it('never has head and turns disagree after a kill between any two writes, or in the middle of the append; the next write cuts the torn tail off', async () => {
    const dir = tmp();
    const file = ledgerFile(dir, SESSION);
    const log = turnLogFile(file);
    // Before: 3 turns written and read back (as a hook call starts).
    await writeLedger(file, ledgerOf(emptyLedger(SESSION), 3));
    const head0 = readFileSync(file);
    const log0 = readFileSync(log);
    // The write the kill interrupts: 4 more turns, one of them and an old one truncated.
    const during = (await readLedger(file, SESSION))!;
    await writeLedger(file, ledgerOf(during, 7, [1, 5]));
    const head1 = readFileSync(file);
    const appended = readFileSync(log).subarray(log0.length);
    // Every kill point: p bytes of the append on disk (0: before it; all: between the append
    // and the head's rename), with the old head; then the new head (after the rename).
    for (let p = 0; p <= appended.length; p++) {
      writeFileSync(file, head0);
      writeFileSync(log, Buffer.concat([log0, appended.subarray(0, p)]));
      const read = await readLedger(file, SESSION);
      expect(listed(read)).toEqual([3, 3, 300]);
      expect(read!.turns.some((t) => t.truncated)).toBe(false);
      // The next call goes on from there: its write cuts the tail off and appends its own.
      await writeLedger(file, ledgerOf(read!, 4));
      expect(listed(await readLedger(file, SESSION))).toEqual([4, 4, 400]);
    }
    writeFileSync(file, head1);
    writeFileSync(log, Buffer.concat([log0, appended]));
    const after = await readLedger(file, SESSION);
    expect(listed(after)).toEqual([7, 7, 700]);
    expect(after!.turns.map((t) => t.truncated ?? false)).toEqual([
      false,
      true,
      false,
      false,
      false,
      true,
      false,
    ]);
  });

  it('logs a turn taken back after it was logged as dropped, and the one in its place', async () => {
    const file = ledgerFile(tmp(), SESSION);
    const ledger = ledgerOf(emptyLedger(SESSION), 3);
    await writeLedger(file, ledger);
    ledger.turns.pop();
    ledger.turns.push({ ...turn(2), uuid: 'other' });
    await writeLedger(file, ledger);
    const read = await readLedger(file, SESSION);
    expect(read!.turns.map((t) => t.uuid)).toEqual(['u0', 'u1', 'other']);
  });

  it('reads a ledger of the single-file form (version 1), and writes it in the current form', async () => {
    const file = ledgerFile(tmp(), SESSION);
    const old = { ...ledgerOf(emptyLedger(SESSION), 2, [1]), version: 1 };
    writeFileSync(file, JSON.stringify(old));
    const read = (await readLedger(file, SESSION))!;
    expect(read).toEqual({ ...old, version: 2 });
    await writeLedger(file, ledgerOf(read, 3));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      version: 2,
      log: { turns: 3 },
    });
    expect((await readLedger(file, SESSION))!.turns.map((t) => t.truncated ?? false)).toEqual([
      false,
      true,
      false,
    ]);
  });

  it('refuses a head naming more of the log than there is, or another count of turns', async () => {
    const file = ledgerFile(tmp(), SESSION);
    await writeLedger(file, ledgerOf(emptyLedger(SESSION), 2));
    const log = readFileSync(turnLogFile(file));
    const saved = `${file}.saved`;
    copyFileSync(file, saved);
    writeFileSync(turnLogFile(file), log.subarray(0, log.length - 3));
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      /its turns' log: the head names \d+ bytes of .*, which holds \d+/,
    );
    writeFileSync(turnLogFile(file), log);
    const head = JSON.parse(readFileSync(saved, 'utf8')) as { log: { turns: number } };
    head.log.turns = 3;
    writeFileSync(file, JSON.stringify(head));
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      'the head names 3 turns, the log holds 2',
    );
  });
});

describe('the ledger lock', () => {
  it('runs two calls of one session one after the other, never interleaved', async () => {
    const file = ledgerFile(tmp(), SESSION);
    const trace: string[] = [];
    const call = (name: string) =>
      withLock(file, { staleMs: 60_000, waitMs: 5_000, pollMs: 5 }, async () => {
        trace.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 30));
        trace.push(`${name} out`);
      });
    await Promise.all([call('a'), call('b')]);
    expect([trace.slice(0, 2), trace.slice(2)]).toEqual([
      [trace[0], trace[0]!.replace('in', 'out')],
      [trace[2], trace[2]!.replace('in', 'out')],
    ]);
  });

  it('takes over a stale lock, and fails closed on a live one held too long', async () => {
    const file = ledgerFile(tmp(), SESSION);
    writeFileSync(`${file}.lock`, '1 old\n');
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${file}.lock`, old, old);
    await expect(withLock(file, { staleMs: 60_000, waitMs: 100 }, async () => 'ran')).resolves.toBe(
      'ran',
    );
    writeFileSync(`${file}.lock`, `${process.ppid} now\n`);
    await expect(
      withLock(file, { staleMs: 60_000, waitMs: 100, pollMs: 10 }, async () => 'ran'),
    ).rejects.toThrow(HookStateError);
  });
});

describe('the ledger lock of a killed hook', () => {
  it('is taken over at once when its process is gone (a background Stop killed as `claude -p` exits)', async () => {
    const file = ledgerFile(tmp(), SESSION);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(`${file}.lock`, `${dead} ${new Date().toISOString()} ${hostname()}\n`);
    const t0 = Date.now();
    await expect(
      withLock(file, { staleMs: 60_000, waitMs: 5_000, pollMs: 10 }, async () => 'ran'),
    ).resolves.toBe('ran');
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it("is waited for when it is another host's, whose processes cannot be seen from here", async () => {
    const file = ledgerFile(tmp(), SESSION);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(`${file}.lock`, `${dead} ${new Date().toISOString()} another-host\n`);
    await expect(
      withLock(file, { staleMs: 60_000, waitMs: 200, pollMs: 10 }, async () => 'ran'),
    ).rejects.toThrow(HookStateError);
  });
});

describe('the hook input and output', () => {
  const base = { session_id: SESSION, transcript_path: '/t.jsonl', cwd: '/p' };

  it("reads the four events and passes any other as not the guard's", () => {
    expect(
      parseHookInput({
        ...base,
        hook_event_name: 'PreCompact',
        trigger: 'auto',
        custom_instructions: null,
      }),
    ).toMatchObject({
      trigger: 'auto',
    });
    expect(
      parseHookInput({ ...base, hook_event_name: 'SessionStart', source: 'compact' }),
    ).toMatchObject({ source: 'compact' });
    expect(parseHookInput({ ...base, hook_event_name: 'Stop', stop_hook_active: true })).toEqual({
      ...base,
      hook_event_name: 'Stop',
      stop_hook_active: true,
    });
    expect(parseHookInput({ ...base, hook_event_name: 'PreToolUse' })).toBeNull();
  });

  it('names the field of a malformed input', () => {
    expect(() =>
      parseHookInput({ ...base, hook_event_name: 'PreCompact', trigger: 'soon' }),
    ).toThrow(new HookInputError('hook input: trigger: expected one of manual, auto, got "soon"'));
    expect(() =>
      parseHookInput({ hook_event_name: 'PostCompact', trigger: 'auto', compact_summary: '' }),
    ).toThrow('hook input: session_id: expected a non-empty string, got undefined');
    expect(() => parseHookInput([])).toThrow('hook input: expected a JSON object');
  });

  it("writes each answer in Claude Code's hook output form", () => {
    expect(hookOutput({ kind: 'allow' })).toEqual({});
    expect(hookOutput({ kind: 'block', reason: 'r' })).toEqual({ decision: 'block', reason: 'r' });
    expect(hookOutput({ kind: 'context', additionalContext: 'rule', systemMessage: 'm' })).toEqual({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'rule' },
      systemMessage: 'm',
    });
  });
});

describe('the options', () => {
  it('take code over env vars over defaults, and make the TURNS policy', () => {
    const o = resolveClaudeCodeOptions(
      { maxBlocks: 1 },
      { CG_CLAUDE_MAX_BLOCKS: '7', CG_CLAUDE_FLOOR_TURNS: '2', CG_CLAUDE_KEEP_PINNED: 'none' },
    );
    expect([o.maxBlocks, o.floorTurns, o.keepPinned, o.onGuardDown, o.verdictTimeoutMs]).toEqual([
      1,
      2,
      [],
      'block',
      20_000,
    ]);
    expect(claudePolicy(o)).toEqual({
      windowTokens: 200_000,
      triggerTokens: 160_000,
      ceilingTokens: 200_000,
      floor: { unit: 'TURNS', span: 2 },
      truncatorUnit: 'TURNS',
      coverage: 'STRICT',
      spill: 'ENABLED',
    });
  });

  it('refuse a malformed env var, naming it', () => {
    expect(() => resolveClaudeCodeOptions({}, { CG_CLAUDE_ON_GUARD_DOWN: 'maybe' })).toThrow(
      ConfigError,
    );
    expect(() =>
      resolveClaudeCodeOptions({}, { CG_CLAUDE_KEEP_PINNED: 'CONSTRAINT,RULES' }),
    ).toThrow('CG_CLAUDE_KEEP_PINNED');
  });
});
