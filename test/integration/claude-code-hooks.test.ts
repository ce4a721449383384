/**
 * The Claude Code hook handlers (src/integrations/claude-code/handlers.ts) against the real
 * broker and a real processor with a trusted key ring (contract §4b), driven with hook inputs and
 * transcripts in the formats Claude Code 2.1.337 writes (recorded, not live: the live runs of the
 * binary are test/integration's claude-code live tests). Proves: a /compact is refused until the
 * transcript is spilled, the spill holds the turns' lines byte for byte, the retry is approved
 * and the boundary committed; the pinned rule comes back verbatim after each of 3 compactions;
 * HALT (spills disabled) blocks with on-call's commands; no processor, or no broker, blocks; an
 * automatic compaction is blocked at most CG_CLAUDE_MAX_BLOCKS times in a row; a Stop (each
 * finished response) reports the new turns and always answers allow, and a Stop and a
 * PreCompact at once take turns on the session's lock.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import pino from 'pino';
import { TOPIC_KEYS, configEnv } from '../../src/config/config';
import { runClaudeCodeHook } from '../../src/cli/hookRun';
import { guardedHooks } from '../../src/integrations/claude-agent-sdk';
import { GuardClient } from '../../src/client';
import { spillFileName } from '../../src/client/spill';
import { handleHook, type ClaudeRuntime } from '../../src/integrations/claude-code/handlers';
import type { ClaudeHookInput, HookAnswer } from '../../src/integrations/claude-code/hookTypes';
import {
  type ClaudeCodeGuardOptions,
  resolveClaudeCodeOptions,
} from '../../src/integrations/claude-code/options';
import { ledgerFile, readLedger } from '../../src/integrations/claude-code/ledger';
import { ClaudeTranscript, hookInput as hook } from '../support/claudeTranscript';
import { signedStack, testKeys, type Stack, viewUntil } from './client/harness';
import { clientFor } from './client/harness';
import { testConfig } from './pipeline';

jest.setTimeout(240_000);

const RULE = 'Rule: you must never delete anything under /prod.';

interface Logged {
  msg: string;
  decision?: string;
  action?: string;
}

function runtime(
  client: () => Promise<GuardClient>,
  dir: string,
  given: ClaudeCodeGuardOptions = {},
): ClaudeRuntime & { logged: Logged[] } {
  const logged: Logged[] = [];
  return {
    client,
    options: resolveClaudeCodeOptions(
      { stateDir: path.join(dir, 'state'), spillDir: path.join(dir, 'spills'), ...given },
      {},
    ),
    now: Date.now,
    log: pino({ level: 'info' }, { write: (s: string) => logged.push(JSON.parse(s) as Logged) }),
    logged,
  };
}

const preCompact = (t: ClaudeTranscript, trigger: 'manual' | 'auto' = 'manual') =>
  hook(t, { hook_event_name: 'PreCompact', trigger, custom_instructions: null });
const sessionStart = (t: ClaudeTranscript, source: string) =>
  hook(t, { hook_event_name: 'SessionStart', source });
const stop = (t: ClaudeTranscript) => hook(t, { hook_event_name: 'Stop', stop_hook_active: false });
const postCompact = (t: ClaudeTranscript, summary: string) =>
  hook(t, { hook_event_name: 'PostCompact', trigger: 'manual', compact_summary: summary });

/** A few rounds of conversation: a question, a tool call and its result, an answer. */
function converse(t: ClaudeTranscript, rounds: number, from = 0): string {
  let last = '';
  for (let i = from; i < from + rounds; i++) {
    t.user(`Please check log file ${i}.`);
    t.tool(`cat /var/log/app-${i}.log`, `INFO request ${i} served in 12 ms`);
    last = t.assistant(`Log file ${i} holds only INFO lines.`);
  }
  return last;
}

describe('the Claude Code hooks against a real processor', () => {
  const keys = testKeys();
  let s: Stack;
  let dir: string;
  beforeAll(async () => {
    s = await signedStack(keys);
  });
  afterAll(async () => {
    await s?.stop();
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-claude-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a /compact until the turns are spilled byte for byte, approves the retry, commits the boundary, and puts the pinned rule back verbatim after each of 3 compactions', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    t.user(RULE);
    let last = converse(t, 2);
    expect(await handleHook(rt, sessionStart(t, 'startup'))).toEqual({ kind: 'allow' });
    for (let k = 1; k <= 3; k++) {
      rt.logged.length = 0;
      const answer = await handleHook(rt, preCompact(t));
      expect(answer).toEqual({ kind: 'allow' });
      const verdicts = rt.logged
        .filter((l) => l.msg === 'verdict')
        .map((l) => `${l.decision} ${l.action}`);
      expect(verdicts).toEqual(['REFUSE SPILL', 'APPROVE NONE']);
      // The newest spill holds every turn's line so far, as Claude Code wrote it.
      const sessionDir = path.join(dir, 'spills', spillFileName(t.sessionId));
      const spills = readdirSync(sessionDir).map((f) => readFileSync(path.join(sessionDir, f)));
      expect(spills).toHaveLength(k);
      const everyTurn = Buffer.from(t.turnLines.join(''), 'utf8');
      expect(spills.some((b) => b.equals(everyTurn))).toBe(true);

      t.compacted(`Summary ${k}: the agent checked the logs; all INFO.`, [last]);
      const back = await handleHook(rt, sessionStart(t, 'compact'));
      expect(back).toEqual({ kind: 'context', additionalContext: RULE });
      expect(
        await handleHook(
          rt,
          postCompact(
            t,
            `<summary>Summary ${k}: the agent checked the log files one by one and found only INFO lines, nothing changed.</summary>`,
          ),
        ),
      ).toEqual({
        kind: 'allow',
      });
      last = converse(t, 2, k * 10);
    }
    await handleHook(rt, sessionStart(t, 'resume'));
    const ledger = (await readLedger(
      ledgerFile(path.join(dir, 'state'), t.sessionId),
      t.sessionId,
    ))!;
    expect([ledger.compactions, ledger.turns.length]).toEqual([3, t.turnLines.length]);
    const view = await viewUntil(
      s,
      t.sessionId,
      (v) => v.lastSeq !== null && (v.head as { TURNS: number }).TURNS === t.turnLines.length,
    );
    expect(view.lastViolations).toEqual([]);
    expect(view.verbatimStart).toBeGreaterThan(0);
  });

  it('reports the compaction at PostCompact when the transcript has no boundary yet (Claude Code writes it after its hooks), and once only when the boundary is read later', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    t.user(RULE);
    const last = converse(t, 2);
    const turns = t.turnLines.length;
    expect(await handleHook(rt, preCompact(t))).toEqual({ kind: 'allow' });
    // The order Claude Code 2.1.337 keeps: SessionStart(compact), PostCompact, then the boundary.
    expect(await handleHook(rt, sessionStart(t, 'compact'))).toEqual({
      kind: 'context',
      additionalContext: RULE,
    });
    const summary = `<summary>The agent checked log files 0 and 1 and found only INFO lines; nothing was changed.</summary>`;
    expect(await handleHook(rt, postCompact(t, summary))).toEqual({ kind: 'allow' });
    const file = ledgerFile(path.join(dir, 'state'), t.sessionId);
    const afterPost = (await readLedger(file, t.sessionId))!;
    expect([afterPost.compactions, afterPost.boundariesAhead, afterPost.pending]).toEqual([
      1,
      1,
      null,
    ]);
    const committed = await viewUntil(s, t.sessionId, (v) => v.verbatimStart === turns);
    expect(committed.lastViolations).toEqual([]);

    t.compacted('Summary: all INFO.', [last]);
    converse(t, 1, 10);
    await handleHook(rt, sessionStart(t, 'resume'));
    const read = (await readLedger(file, t.sessionId))!;
    expect([read.compactions, read.boundariesAhead, read.turns.length]).toEqual([
      1,
      0,
      t.turnLines.length,
    ]);
    const view = await viewUntil(
      s,
      t.sessionId,
      (v) => (v.head as { TURNS: number }).TURNS === t.turnLines.length,
    );
    expect(view.lastViolations).toEqual([]);
    expect(view.verbatimStart).toBe(turns);
  });

  it('reports the new turns at each Stop and answers allow; a Stop and a PreCompact at once take turns on the lock, neither lost nor corrupted', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    const file = ledgerFile(path.join(dir, 'state'), t.sessionId);
    t.user(RULE);
    converse(t, 3);
    expect(await handleHook(rt, stop(t))).toEqual({ kind: 'allow' });
    expect((await readLedger(file, t.sessionId))!.turns).toHaveLength(t.turnLines.length);
    const followed = t.turnLines.length;
    await viewUntil(s, t.sessionId, (v) => (v.head as { TURNS: number }).TURNS === followed);
    // A response ends (its Stop runs in the background) and a /compact comes right after.
    converse(t, 5, 10);
    rt.logged.length = 0;
    const [stopped, compacted] = await Promise.all([
      handleHook(rt, stop(t)),
      handleHook(rt, preCompact(t)),
    ]);
    expect([stopped, compacted]).toEqual([{ kind: 'allow' }, { kind: 'allow' }]);
    expect(rt.logged.filter((l) => l.msg === 'verdict').map((l) => l.decision)).toEqual([
      'REFUSE',
      'APPROVE',
    ]);
    const ledger = (await readLedger(file, t.sessionId))!;
    expect([ledger.turns.length, ledger.pending?.approved]).toEqual([t.turnLines.length, true]);
    const view = await viewUntil(
      s,
      t.sessionId,
      (v) => (v.head as { TURNS: number }).TURNS === t.turnLines.length,
    );
    expect(view.lastViolations).toEqual([]);
  });

  it('answers a Stop allow, with no message, when the session cannot be followed (logged)', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    t.user(RULE);
    const file = ledgerFile(path.join(dir, 'state'), t.sessionId);
    expect(await handleHook(rt, stop(t))).toEqual({ kind: 'allow' });
    writeFileSync(file, '{"version":2,');
    expect(await handleHook(rt, stop(t))).toEqual({ kind: 'allow' });
    expect(rt.logged.map((l) => l.msg)).toContain('compaction-guard hook failed');
    const down = runtime(
      () => Promise.reject(new Error('no broker')),
      mkdtempSync(path.join(dir, 'x-')),
    );
    expect(await handleHook(down, stop(t))).toEqual({ kind: 'allow' });
    expect(down.logged.map((l) => l.msg)).toContain(
      'compaction-guard could not follow the session',
    );
  });

  it('reports a tool result Claude Code cleared from the context as its turn truncated', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    t.user(RULE);
    const id = t.tool('cat /var/log/big.log', 'INFO '.repeat(200));
    converse(t, 1);
    expect(await handleHook(rt, sessionStart(t, 'startup'))).toEqual({ kind: 'allow' });
    t.clearedResult(id);
    t.clearedResult(id); // seen again: reported once
    expect(await handleHook(rt, sessionStart(t, 'resume'))).toEqual({ kind: 'allow' });
    // Turns: 0 the rule, 1 the call, 2 its result (cleared).
    const view = await viewUntil(s, t.sessionId, (v) => (v.truncated as unknown[]).length > 0);
    expect(view.truncated).toEqual([{ unit: 'TURNS', start: 2, end: 3 }]);
  });

  it('reports a degenerate compaction summary, and the pinned rule was put back', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir);
    t.user(RULE);
    const last = converse(t, 2);
    expect(await handleHook(rt, preCompact(t))).toEqual({ kind: 'allow' });
    t.compacted('', [last]);
    expect(await handleHook(rt, sessionStart(t, 'compact'))).toEqual({
      kind: 'context',
      additionalContext: RULE,
    });
    const post = await handleHook(rt, postCompact(t, 'Error generating summary'));
    expect(post).toMatchObject({
      kind: 'allow',
      systemMessage: expect.stringContaining('ERROR_SUMMARY'),
    });
    expect((post as { systemMessage: string }).systemMessage).toContain(
      'The pinned turns were put back verbatim',
    );
  });

  it('HALTs with spills disabled: the compaction is blocked, the reason names the range and the on-call commands', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    const rt = runtime(() => Promise.resolve(s.client), dir, { spill: 'DISABLED' });
    t.user(RULE);
    converse(t, 2);
    const answer = await handleHook(rt, preCompact(t));
    expect(answer.kind).toBe('block');
    const reason = (answer as { reason: string }).reason;
    expect(reason).toContain(`compaction-guard HALT, session ${t.sessionId}`);
    expect(reason).toContain(`npx compaction-guard inspect ${t.sessionId}`);
    expect(reason).toMatch(/acknowledge --session \S+ --unit TURNS --range \d+-\d+/);
    // Nothing was spilled.
    expect(readdirSync(dir)).not.toContain('spills');
  });

  describe('the hook command and the Agent SDK hooks', () => {
    /** One `compaction-guard hook claude-code` call: its exit code, stdout and stderr. */
    async function command(input: unknown, env: NodeJS.ProcessEnv) {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      stdout.on('data', (d: Buffer) => out.push(d));
      stderr.on('data', (d: Buffer) => err.push(d));
      const code = await runClaudeCodeHook({
        stdin: Readable.from([typeof input === 'string' ? input : JSON.stringify(input)]),
        stdout,
        stderr,
        env,
      });
      return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
    }

    it('runs a /compact through the command: spilled, approved ({} on stdout, exit 0), the rule back after it', async () => {
      const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
      t.user(RULE);
      const last = converse(t, 2);
      const env = {
        ...configEnv(s.config, ['brokers', 'registryUrl', ...TOPIC_KEYS]),
        CG_SIGNING_KEY_FILE: keys.keyFile(keys.orchestrator),
        CG_LOG_LEVEL: 'warn',
      };
      expect(await command(preCompact(t), env)).toMatchObject({ code: 0, stdout: '{}\n' });
      // The default state directory: beside the transcript.
      const spills = path.join(dir, '.compaction-guard', 'spills', spillFileName(t.sessionId));
      expect(readdirSync(spills)).toHaveLength(1);
      t.compacted('Summary: the logs were checked.', [last]);
      const back = await command(sessionStart(t, 'compact'), env);
      expect(JSON.parse(back.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: RULE },
      });
      expect(await command({ hook_event_name: 'Stop', session_id: 'x' }, env)).toMatchObject({
        code: 0,
        stdout: '{}\n',
      });
      const bad = await command({ ...preCompact(t), trigger: 'later' }, env);
      expect(bad).toMatchObject({ code: 2, stdout: '' });
      expect(bad.stderr).toContain(
        'hook input: trigger: expected one of manual, auto, got "later"',
      );
    });

    it("gives the Agent SDK's query() hooks the same answers (guardedHooks)", async () => {
      const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
      t.user(RULE);
      const last = converse(t, 2);
      const hooks = guardedHooks({
        client: s.client,
        stateDir: path.join(dir, 'state'),
        logger: pino({ level: 'silent' }),
      });
      const call = (event: 'PreCompact' | 'SessionStart' | 'Stop', input: ClaudeHookInput) =>
        hooks[event]![0]!.hooks[0]!(input as never, undefined, {
          signal: new AbortController().signal,
        });
      expect(await call('PreCompact', { ...preCompact(t), trigger: 'later' } as never)).toEqual({
        decision: 'block',
        reason: 'compaction-guard: hook input: trigger: expected one of manual, auto, got "later"',
      });
      expect(await call('Stop', stop(t))).toEqual({});
      expect(
        (await readLedger(ledgerFile(path.join(dir, 'state'), t.sessionId), t.sessionId))!.turns,
      ).toHaveLength(t.turnLines.length);
      expect(await call('Stop', { ...stop(t), transcript_path: '' } as never)).toEqual({});
      expect(await call('PreCompact', preCompact(t))).toEqual({});
      t.compacted('Summary: the logs were checked.', [last]);
      expect(await call('SessionStart', sessionStart(t, 'compact'))).toEqual({
        hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: RULE },
      });
    });
  });
});

describe('the Claude Code hooks with the guard down', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-claude-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('blocks a compaction no processor answers (no verdict in time), and lets it through with onGuardDown allow', async () => {
    // A broker and registry, but no processor reading these topics.
    const client = await clientFor(testConfig());
    try {
      const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
      t.user(RULE);
      converse(t, 1);
      const rt = runtime(() => Promise.resolve(client), dir, { verdictTimeoutMs: 1500 });
      const answer = await handleHook(rt, preCompact(t));
      expect(answer).toMatchObject({
        kind: 'block',
        reason: expect.stringContaining('no verdict'),
      });
      const allow = runtime(() => Promise.resolve(client), dir, {
        verdictTimeoutMs: 1500,
        onGuardDown: 'allow',
      });
      expect(await handleHook(allow, preCompact(t))).toMatchObject({
        kind: 'allow',
        systemMessage: expect.stringContaining('CG_CLAUDE_ON_GUARD_DOWN=allow'),
      });
    } finally {
      await client.close();
    }
  });

  it('blocks when the broker cannot be reached', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    t.user(RULE);
    converse(t, 1);
    const connect = async () => {
      const client = new GuardClient({
        env: { KAFKA_BROKERS: '127.0.0.1:1', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1' },
      });
      await client.connect();
      return client;
    };
    const answer = await handleHook(runtime(connect, dir), preCompact(t, 'auto'));
    expect(answer).toMatchObject({
      kind: 'block',
      reason: expect.stringContaining('KAFKA_BROKERS'),
    });
  });

  it('blocks an automatic compaction at most maxBlocks times in a row, a manual one always', async () => {
    const t = new ClaudeTranscript(path.join(dir, 'session.jsonl'));
    t.user(RULE);
    converse(t, 1);
    const down = () =>
      Promise.reject(new Error('cannot reach Kafka at 127.0.0.1:1 (KAFKA_BROKERS)'));
    const rt = runtime(down, dir, { maxBlocks: 2 });
    const answers: HookAnswer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await handleHook(rt, preCompact(t, 'auto')));
    expect(answers.map((a) => a.kind)).toEqual(['block', 'block', 'allow', 'block']);
    expect(answers[2]!.systemMessage).toContain('after 2 blocks in a row (CG_CLAUDE_MAX_BLOCKS)');
    expect(rt.logged.map((l) => l.msg)).toContain(
      'automatic compaction let through after the most blocks in a row',
    );
    // A manual compaction is always blocked when refused: the user is there to read why.
    const manual: HookAnswer[] = [];
    for (let i = 0; i < 3; i++) manual.push(await handleHook(rt, preCompact(t, 'manual')));
    expect(manual.map((a) => a.kind)).toEqual(['block', 'block', 'block']);
    // SessionStart goes ahead with the guard down.
    expect(await handleHook(rt, sessionStart(t, 'startup'))).toEqual({ kind: 'allow' });
  });
});
