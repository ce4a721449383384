/**
 * The Claude Code hook's per-session ledger (src/integrations/claude-code/ledger.ts): written
 * whole or not at all, read back as written, a corrupt file named with what was expected, and
 * one hook call at a time per session (a stale lock taken over); and the hook's input and
 * output forms and settings.
 */
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  emptyLedger,
  HookStateError,
  ledgerFile,
  readLedger,
  withLock,
  writeLedger,
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
    // The temp file was renamed into place: nothing else is left in the directory.
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it('names a session id that is no plain file name by its hash', () => {
    expect(path.basename(ledgerFile('/s', '../x'))).toMatch(/^[0-9a-f]{64}\.json$/);
  });

  it('refuses a corrupt file, naming it and what was expected', async () => {
    const file = ledgerFile(tmp(), SESSION);
    writeFileSync(file, '{"version":1,');
    await expect(readLedger(file, SESSION)).rejects.toThrow(HookStateError);
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      `${file}: not a compaction-guard Claude Code session ledger (version 1): not JSON`,
    );
    writeFileSync(file, JSON.stringify({ ...emptyLedger(SESSION), turns: [{ start: 5, end: 2 }] }));
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      'turns[0]: expected {start, end, role, pins}',
    );
    writeFileSync(file, JSON.stringify(emptyLedger('another')));
    await expect(readLedger(file, SESSION)).rejects.toThrow(
      `expected session ${SESSION}, got "another"`,
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
    writeFileSync(`${file}.lock`, '1 now\n');
    await expect(
      withLock(file, { staleMs: 60_000, waitMs: 100, pollMs: 10 }, async () => 'ran'),
    ).rejects.toThrow(HookStateError);
  });
});

describe('the hook input and output', () => {
  const base = { session_id: SESSION, transcript_path: '/t.jsonl', cwd: '/p' };

  it("reads the three events and passes any other as not the guard's", () => {
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
    expect(parseHookInput({ ...base, hook_event_name: 'Stop' })).toBeNull();
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
