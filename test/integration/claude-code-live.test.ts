/**
 * The guard around the real Claude Code binary (2.1.337, the Agent SDK's linux-x64 package), for
 * real: `claude -p` against a local mock of the Messages API (no network: test/support/
 * claudeCode.ts), the hooks written by `compaction-guard hook claude-code install --project`,
 * and the real broker, registry and processor with a trusted key ring; the hook commands sign
 * their spill answers with the key in CG_SIGNING_KEY_FILE. Then the same through the Agent SDK's
 * `query()` with `guardedHooks` (test/support/agentSdkSession.ts).
 *
 * One processor for the file, one project, one conversation that compacts manually three times
 * and automatically once; a second session with spills disabled (HALT); and last, the processor
 * stopped (guard down). About 40 claude runs, ~1.5 s each plus the hooks' own connections.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { TOPIC_KEYS, configEnv } from '../../src/config/config';
import { spillFileName } from '../../src/client/spill';
import type { Running } from '../../src/cli/run';
import { start, testConfig } from './pipeline';
import { testKeys } from './client/harness';
import { runCli } from '../support/cli';
import {
  ClaudeProject,
  ProxyTripwire,
  entryOf,
  runAgentSdk,
  type ClaudeResult,
  type ClaudeRun,
} from '../support/claudeCode';
import {
  MockAnthropic,
  messageText,
  type MessagesRequestBody,
  type RecordedRequest,
} from '../support/mockAnthropic';
import type { AgentSdkSpec } from '../support/agentSdkSession';

jest.setTimeout(300_000);

/** A user message with a rule word (RULE_WORDS): a CONSTRAINT pin, put back after compaction. */
const RULE = 'Rule: never use tabs in any file, always indent with two spaces.';

/** Every string in a request body (system prompt, messages, tools) joined: where a rule may be. */
function allText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(allText).join('\n');
  if (value !== null && typeof value === 'object')
    return Object.values(value).map(allText).join('\n');
  return '';
}

/** The first turn request after each summary request, in order (undefined: none yet). */
function firstTurnsAfterSummaries(
  requests: readonly RecordedRequest[],
): (RecordedRequest | undefined)[] {
  return requests.flatMap((r, i) =>
    r.kind === 'summary' ? [requests.slice(i + 1).find((n) => n.kind === 'turn')] : [],
  );
}

/** A transcript line of the conversation itself: a user prompt we sent, or a model answer. */
function isConversationLine(line: string, prompts: readonly string[]): boolean {
  const e = entryOf(line);
  if (e.isMeta === true || e.isCompactSummary === true || e.message === undefined) return false;
  if (e.type === 'assistant') return true;
  if (e.type !== 'user') return false;
  const text = messageText(e.message.content as MessagesRequestBody['messages'][number]['content']);
  return prompts.some((p) => text.includes(p));
}

/** The lines of the transcript before its n-th compact_boundary (n from 1; all when fewer). */
function linesBeforeBoundary(lines: readonly string[], n: number): string[] {
  let seen = 0;
  const end = lines.findIndex((l) => entryOf(l).subtype === 'compact_boundary' && ++seen === n);
  return end === -1 ? [...lines] : lines.slice(0, end);
}

/** Whether `part` occurs in `whole` in order (not necessarily next to each other). */
function inOrder(part: readonly string[], whole: readonly string[]): boolean {
  let i = 0;
  for (const line of whole) if (i < part.length && line === part[i]) i++;
  return i === part.length;
}

/** The spill files of a session in a FileSpillStore directory, each split into its lines. */
function spillsOf(dir: string, sessionId: string): string[][] {
  const sessionDir = path.join(dir, spillFileName(sessionId));
  if (!existsSync(sessionDir)) return [];
  return readdirSync(sessionDir)
    .filter((f) => f.endsWith('.spill'))
    .map((f) =>
      readFileSync(path.join(sessionDir, f), 'utf8')
        .split(/(?<=\n)/)
        .filter((l) => l !== ''),
    );
}

interface VerdictView {
  requestId: string;
  decidedAt: number;
  decision: string;
  action: string;
  basis: string;
}

describe('Claude Code and the Agent SDK guarded by compaction-guard, live', () => {
  const keys = testKeys();
  const config = testConfig({ trustedKeysFile: keys.ring, allowUnsigned: false });
  let running: Running | null = null;
  let mock: MockAnthropic;
  let tripwire: ProxyTripwire;
  let project: ClaudeProject;
  let spillDir: string;
  let userHookLog: string;
  /** The mock's next summaries (null: its default, which never holds the rule). */
  let summaryText: string | null = null;

  /** What a hook command needs to reach the guard (docs/integration.md, "From a project outside the clone"). */
  const guardEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    ...configEnv(config, ['brokers', 'registryUrl', ...TOPIC_KEYS]),
    CG_SIGNING_KEY_FILE: keys.keyFile(keys.orchestrator),
    CG_CLAUDE_SPILL_DIR: spillDir,
    // The model's window as Claude Code sees it (its auto-compaction fires near 1M).
    CG_CLAUDE_WINDOW_TOKENS: '1000000',
    ...extra,
  });

  beforeAll(async () => {
    running = await start(config);
    mock = await MockAnthropic.start({
      summary: (_, n) => summaryText ?? `<summary>Summary ${n}</summary>`,
    });
    tripwire = await ProxyTripwire.start();
    project = new ClaudeProject(mock.url, tripwire.url);
    spillDir = path.join(project.home, 'spills');
    userHookLog = path.join(project.dir, 'user-hook.jsonl');
    // The user's own hook, there before the install, which must keep it.
    const record = `cat >> ${JSON.stringify(userHookLog)}; echo >> ${JSON.stringify(userHookLog)}`;
    project.writeSettings({
      hooks: { PreCompact: [{ hooks: [{ type: 'command', command: record }] }] },
    });
  });
  afterAll(async () => {
    await running?.stop();
    await mock?.close();
    await tripwire?.close();
    project?.remove();
  });

  async function view(sessionId: string): Promise<Record<string, unknown>> {
    const res = await fetch(
      `http://127.0.0.1:${running!.httpPort}/sessions/${encodeURIComponent(sessionId)}`,
    );
    if (res.status !== 200) throw new Error(`/sessions/${sessionId}: HTTP ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  const ok = (r: ClaudeRun): ClaudeResult => {
    if (r.exitCode !== 0 || r.result === null || r.result.is_error)
      throw new Error(
        `claude failed (${r.exitCode}, timed out ${r.timedOut}): ${r.stdout}\n${r.stderr}`,
      );
    return r.result;
  };

  /** Runs `prompts` in order in one session (started by the first unless `resume`). */
  async function converse(
    prompts: readonly string[],
    o: { resume?: string; env?: NodeJS.ProcessEnv } = {},
  ): Promise<ClaudeResult[]> {
    const results: ClaudeResult[] = [];
    let resume = o.resume;
    for (const prompt of prompts) {
      const r = ok(await project.run(prompt, { resume, env: guardEnv(o.env) }));
      resume = r.session_id;
      results.push(r);
    }
    return results;
  }

  /** The session's last verdicts (the processor keeps five per session); none before its first. */
  async function lastVerdicts(sessionId: string): Promise<VerdictView[]> {
    try {
      return (await view(sessionId)).lastVerdicts as VerdictView[];
    } catch {
      return [];
    }
  }

  /** The verdicts of the session that `act` brought: those not among its last ones before. */
  async function verdictsOf(
    sessionId: string,
    act: () => Promise<unknown>,
  ): Promise<VerdictView[]> {
    const key = (v: VerdictView) => `${v.requestId}/${v.decidedAt}`;
    const before = new Set((await lastVerdicts(sessionId)).map(key));
    await act();
    return (await lastVerdicts(sessionId)).filter((v) => !before.has(key(v)));
  }

  /** REFUSE with SPILL, then APPROVE on LOSSLESS_SPILL. */
  function expectSpilledThenApproved(verdicts: readonly VerdictView[]): void {
    expect(verdicts.map((v) => `${v.decision} ${v.action} ${v.basis}`)).toEqual([
      expect.stringMatching(/^REFUSE SPILL /),
      'APPROVE NONE LOSSLESS_SPILL',
    ]);
  }

  const prompts: string[] = [RULE, 'first task: list the files', 'second task', 'third task'];
  let sessionId: string;

  it('install --project writes the guard hooks into .claude/settings.json and keeps the user hook there', async () => {
    const installed = await runCli(
      ['hook', 'claude-code', 'install', '--project', '--dir', project.dir],
      { ...process.env },
    );
    expect(installed).toMatchObject({ code: 0 });
    const settings = project.settings() as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const commands = (event: string) =>
      (settings.hooks[event] ?? []).flatMap((g) => g.hooks.map((h) => h.command));
    for (const event of ['PreCompact', 'PostCompact', 'SessionStart'])
      expect(
        commands(event).some((c) => /compaction-guard(\.js)?"? hook claude-code/.test(c)),
      ).toBe(true);
    expect(commands('PreCompact').some((c) => c.includes(userHookLog))).toBe(true);
    const again = await runCli(
      ['hook', 'claude-code', 'install', '--project', '--dir', project.dir],
      { ...process.env },
    );
    expect(again).toMatchObject({ code: 0 });
    expect(project.settings()).toEqual(settings);
  });

  it('/compact is refused until the turns are spilled, byte for byte as in the transcript; the retry is approved and the compaction goes ahead', async () => {
    const results = await converse(prompts);
    sessionId = results[0]!.session_id;
    const summariesBefore = mock.of('summary').length;
    const verdicts = await verdictsOf(sessionId, async () =>
      ok(await project.run('/compact', { resume: sessionId, env: guardEnv() })),
    );
    expect(mock.of('summary')).toHaveLength(summariesBefore + 1);
    expectSpilledThenApproved(verdicts);

    const transcript = project.transcriptLines(sessionId);
    const spills = spillsOf(spillDir, sessionId);
    expect(spills.length).toBeGreaterThan(0);
    for (const spill of spills) expect(inOrder(spill, transcript)).toBe(true);
    const spilled = new Set(spills.flat());
    const conversation = linesBeforeBoundary(transcript, 1).filter((l) =>
      isConversationLine(l, prompts),
    );
    expect(conversation.length).toBeGreaterThanOrEqual(2 * prompts.length);
    for (const line of conversation) expect(spilled.has(line)).toBe(true);
    // The guard saw every turn: its head is past all of them.
    const head = (await view(sessionId)).head as { TURNS: number };
    expect(head.TURNS).toBeGreaterThanOrEqual(conversation.length);
  });

  it('the pinned rule is in the first model request after each of three compactions, verbatim', async () => {
    ok(await project.run('after the first compaction', { resume: sessionId, env: guardEnv() }));
    for (const round of [2, 3]) {
      await converse([`round ${round}: task one`, `round ${round}: task two`], {
        resume: sessionId,
      });
      expectSpilledThenApproved(
        await verdictsOf(sessionId, async () =>
          ok(await project.run('/compact', { resume: sessionId, env: guardEnv() })),
        ),
      );
      ok(await project.run(`after compaction ${round}`, { resume: sessionId, env: guardEnv() }));
    }
    const after = firstTurnsAfterSummaries(mock.requests);
    expect(after).toHaveLength(3);
    for (const request of after) expect(allText(request?.body)).toContain(RULE);
  });

  it('an automatic compaction near the window is guarded the same way, and the rule survives it', async () => {
    const summaries = mock.of('summary').length;
    mock.inputTokens = 990_000;
    let verdicts: VerdictView[];
    try {
      ok(await project.run('a turn that fills the window', { resume: sessionId, env: guardEnv() }));
      verdicts = await verdictsOf(sessionId, async () =>
        ok(
          await project.run('the turn that compacts first', { resume: sessionId, env: guardEnv() }),
        ),
      );
    } finally {
      mock.inputTokens = 1000;
    }
    expect(mock.of('summary')).toHaveLength(summaries + 1);
    expectSpilledThenApproved(verdicts);
    const [last] = firstTurnsAfterSummaries(mock.requests).slice(-1);
    expect(allText(last?.body)).toContain(RULE);
    const preCompacts = readFileSync(userHookLog, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { trigger: string; session_id: string });
    expect(preCompacts.filter((c) => c.session_id === sessionId).map((c) => c.trigger)).toEqual(
      expect.arrayContaining(['manual', 'auto']),
    );
  });

  it('a summary that is an error text still leaves the rule in the next model request', async () => {
    summaryText = 'Error generating summary: the model was overloaded';
    try {
      await converse(['a task before a bad summary'], { resume: sessionId });
      ok(await project.run('/compact', { resume: sessionId, env: guardEnv() }));
    } finally {
      summaryText = null;
    }
    ok(await project.run('after the bad summary', { resume: sessionId, env: guardEnv() }));
    const [last] = firstTurnsAfterSummaries(mock.requests).slice(-1);
    expect(allText(last?.body)).toContain(RULE);
  });

  it('with spills disabled, /compact is blocked (HALT) and the answer names the loss and what on call can do', async () => {
    const env = { CG_CLAUDE_SPILL: 'DISABLED' };
    const [first] = await converse([RULE, 'one task', 'another task', 'a third task'], { env });
    const halted = first!.session_id;
    const summaries = mock.of('summary').length;
    const r = ok(await project.run('/compact', { resume: halted, env: guardEnv(env) }));
    expect(r.result).toMatch(/Compaction blocked by PreCompact hook/);
    expect(r.result).toMatch(/HALT/);
    expect(r.result).toContain(`inspect ${halted}`);
    expect(r.result).toMatch(/acknowledge/);
    expect(mock.of('summary')).toHaveLength(summaries);
    expect(
      project.transcriptLines(halted).some((l) => entryOf(l).subtype === 'compact_boundary'),
    ).toBe(false);
  });

  it('the Agent SDK query() with guardedHooks: refused until spilled, approved, the rule back after each compaction', async () => {
    const sdkProject = new ClaudeProject(mock.url, tripwire.url);
    try {
      const summaries = mock.of('summary').length;
      const requests = mock.requests.length;
      const sdkPrompts = [RULE, 'sdk task one', 'sdk task two', 'sdk task three'];
      const spec: AgentSdkSpec = {
        hooks: 'guard',
        cwd: sdkProject.dir,
        env: sdkProject.env(),
        prompts: [...sdkPrompts, '/compact', 'after one', 'sdk task four', '/compact', 'after two'],
      };
      const turns = await runAgentSdk(spec, {
        HOME: project.home,
        ...configEnv(config, ['brokers', 'registryUrl', ...TOPIC_KEYS]),
        CG_SIGNING_KEY_FILE: keys.keyFile(keys.orchestrator),
      });
      expect(turns.map((t) => t.result.is_error)).toEqual(spec.prompts.map(() => false));
      const id = turns[0]!.result.session_id;
      expect(mock.of('summary')).toHaveLength(summaries + 2);
      const verdicts = await lastVerdicts(id);
      expectSpilledThenApproved(verdicts.slice(0, 2));
      expectSpilledThenApproved(verdicts.slice(2));
      const after = firstTurnsAfterSummaries(mock.requests.slice(requests));
      expect(after).toHaveLength(2);
      for (const request of after) expect(allText(request?.body)).toContain(RULE);
      // The spills are where the guard keeps them by default: next to the transcript.
      const transcript = sdkProject.transcriptLines(id);
      const spills = spillsOf(
        path.join(path.dirname(sdkProject.transcriptPath(id)), '.compaction-guard', 'spills'),
        id,
      );
      expect(spills.length).toBeGreaterThan(0);
      for (const spill of spills) expect(inOrder(spill, transcript)).toBe(true);
      const spilled = new Set(spills.flat());
      for (const line of linesBeforeBoundary(transcript, 1).filter((l) =>
        isConversationLine(l, sdkPrompts),
      ))
        expect(spilled.has(line)).toBe(true);
    } finally {
      sdkProject.remove();
    }
  });

  it('reaches nothing but the mock: no request through the proxy, only Messages API paths', () => {
    expect(tripwire.attempts).toEqual([]);
    expect(mock.of('other')).toEqual([]);
  });

  it('with the processor stopped, /compact is blocked (guard down: the default) and says so', async () => {
    await running!.stop();
    running = null;
    const summaries = mock.of('summary').length;
    const r = ok(
      await project.run('/compact', {
        resume: sessionId,
        env: guardEnv({ CG_CLAUDE_VERDICT_TIMEOUT_MS: '3000' }),
      }),
    );
    expect(r.result).toMatch(/Compaction blocked by PreCompact hook/);
    expect(r.result).toMatch(/verdict/i);
    expect(mock.of('summary')).toHaveLength(summaries);
  });
});
