/**
 * The live harness itself, before any guard: the real Claude Code binary against the local mock
 * of the Messages API (test/support/mockAnthropic.ts, test/support/claudeCode.ts), with a hook
 * that only records its input. What it shows is what the guard's live tests rely on: the hooks
 * fire in `-p` mode and in this order, the mock tells a summary request from a turn, a hook's
 * SessionStart output reaches the next model request, auto-compaction follows the usage the
 * mock reports, and nothing but the mock is contacted.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ClaudeProject, ProxyTripwire, runAgentSdk, type ClaudeRun } from '../support/claudeCode';
import { MockAnthropic, type SummaryScript } from '../support/mockAnthropic';

jest.setTimeout(120_000);

/** A hook command that appends its JSON input to `file` and, for SessionStart, prints a marker. */
function recordingHook(file: string): string {
  const script = [
    'let s="";',
    'process.stdin.on("data",d=>s+=d).on("end",()=>{',
    `require("fs").appendFileSync(${JSON.stringify(file)},s.trim()+"\\n");`,
    'const i=JSON.parse(s);',
    'if(i.hook_event_name==="SessionStart")process.stdout.write("HOOK-OUTPUT-"+i.source);',
    'if(i.hook_event_name==="PreCompact"&&process.env.TEST_BLOCK)',
    'process.stdout.write(JSON.stringify({decision:"block",reason:process.env.TEST_BLOCK}));',
    '})',
  ].join('');
  return `node -e '${script}'`;
}

interface HookCall {
  hook_event_name: string;
  session_id: string;
  transcript_path: string;
  source?: string;
  trigger?: string;
  custom_instructions?: string | null;
  compact_summary?: string;
}

describe('Claude Code against the local Messages API mock, with a recording hook', () => {
  let summary: SummaryScript = '<summary>the scripted summary</summary>';
  let mock: MockAnthropic;
  let tripwire: ProxyTripwire;
  let project: ClaudeProject;
  let hookLog: string;
  beforeAll(async () => {
    mock = await MockAnthropic.start({ summary: () => summary });
    tripwire = await ProxyTripwire.start();
    project = new ClaudeProject(mock.url, tripwire.url);
    hookLog = path.join(project.dir, 'hooks.jsonl');
    const hook = [{ hooks: [{ type: 'command', command: recordingHook(hookLog) }] }];
    project.writeSettings({ hooks: { PreCompact: hook, PostCompact: hook, SessionStart: hook } });
  });
  afterAll(async () => {
    await mock?.close();
    await tripwire?.close();
    project?.remove();
  });

  const hookCalls = (): HookCall[] =>
    readFileSync(hookLog, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as HookCall);
  const succeeded = (r: ClaudeRun) => {
    expect(r).toMatchObject({ exitCode: 0, timedOut: false });
    expect(r.result).not.toBeNull();
    return r.result!;
  };

  let sessionId: string;

  it('runs a turn against the mock and writes the transcript where the hooks are told it is', async () => {
    const first = succeeded(await project.run('Rule: never use tabs. Say hi'));
    sessionId = first.session_id;
    expect(first.result).toBe('Answer 0');
    succeeded(await project.run('message 2', { resume: sessionId }));
    const [start] = hookCalls();
    expect(start).toMatchObject({ hook_event_name: 'SessionStart', source: 'startup' });
    expect(start!.transcript_path).toBe(project.transcriptPath(sessionId));
    expect(project.transcriptLines(sessionId).join('')).toContain('Rule: never use tabs. Say hi');
  });

  it('/compact fires PreCompact, SessionStart compact, PostCompact; the summary request is answered with the script, the SessionStart output reaches the next request', async () => {
    const before = hookCalls().length;
    const requests = mock.requests.length;
    succeeded(await project.run('/compact keep the rules', { resume: sessionId }));
    const after = succeeded(await project.run('after the compaction', { resume: sessionId }));
    expect(after.result).toMatch(/^Answer \d+$/);
    const calls = hookCalls().slice(before);
    expect(calls.map((c) => `${c.hook_event_name}:${c.source ?? c.trigger}`)).toEqual([
      'SessionStart:resume',
      'PreCompact:manual',
      'SessionStart:compact',
      'PostCompact:manual',
      'SessionStart:resume',
    ]);
    expect(calls[1]).toMatchObject({
      custom_instructions: 'keep the rules',
      session_id: sessionId,
    });
    expect(calls[3]).toMatchObject({ compact_summary: summary });
    const made = mock.requests.slice(requests);
    expect(made.map((r) => r.kind)).toEqual(['summary', 'turn']);
    expect(made[0]!.raw).toContain('Rule: never use tabs. Say hi');
    expect(made[1]!.raw).toContain('HOOK-OUTPUT-compact');
    expect(made[1]!.raw).toContain('the scripted summary');
    // Without a guard the rule is gone from the model's view: the summary replaced it.
    expect(made[1]!.raw).not.toContain('Rule: never use tabs');
  });

  it('a reported usage near the window makes the next resumed turn compact automatically', async () => {
    const before = hookCalls().length;
    mock.inputTokens = 990_000;
    try {
      succeeded(await project.run('a big answer', { resume: sessionId }));
      succeeded(await project.run('the turn that compacts first', { resume: sessionId }));
    } finally {
      mock.inputTokens = 1000;
    }
    const events = hookCalls()
      .slice(before)
      .map((c) => `${c.hook_event_name}:${c.source ?? c.trigger}`);
    expect(events).toContain('PreCompact:auto');
    expect(events).toContain('PostCompact:auto');
  });

  it('a PreCompact block stops /compact and the answer carries its reason', async () => {
    const r = succeeded(
      await project.run('/compact', {
        resume: sessionId,
        env: { TEST_BLOCK: 'the guard says no: turns would be lost' },
      }),
    );
    expect(r.result).toMatch(/Compaction blocked by PreCompact hook/);
    expect(r.result).toContain('the guard says no: turns would be lost');
  });

  it('a blocked automatic compaction at the limit fails that turn: Prompt is too long', async () => {
    mock.inputTokens = 990_000;
    try {
      succeeded(await project.run('fills the window', { resume: sessionId }));
      const blocked = await project.run('cannot fit', {
        resume: sessionId,
        env: { TEST_BLOCK: 'blocked on purpose' },
      });
      expect(blocked).toMatchObject({ exitCode: 1, timedOut: false });
      expect(blocked.result).toMatchObject({ is_error: true, result: 'Prompt is too long' });
    } finally {
      mock.inputTokens = 1000;
    }
  });

  it('an empty summary or an API error fails the compaction before PostCompact (the binary, not a hook, answers these)', async () => {
    const before = hookCalls().length;
    summary = '';
    const empty = succeeded(await project.run('/compact', { resume: sessionId }));
    summary = { error: { status: 400, type: 'invalid_request_error', message: 'mock refuses' } };
    const failed = succeeded(await project.run('/compact', { resume: sessionId }));
    summary = '<summary>the scripted summary</summary>';
    expect(empty.result).toMatch(/Error during compaction: .*empty/);
    expect(failed.result).toMatch(/Error during compaction: .*mock refuses/);
    expect(
      hookCalls()
        .slice(before)
        .map((c) => c.hook_event_name),
    ).not.toContain('PostCompact');
  });

  it('reaches nothing but the mock: no request through the proxy, only Messages API paths', () => {
    expect(tripwire.attempts).toEqual([]);
    expect(mock.of('other')).toEqual([]);
    expect(mock.requests.every((r) => r.url.startsWith('/v1/messages'))).toBe(true);
  });
});

describe('the Agent SDK query() against the mock, with recording hook callbacks', () => {
  it('fires PreCompact, SessionStart compact and PostCompact as callbacks; the SessionStart context reaches the next request; nothing else is contacted', async () => {
    const mock = await MockAnthropic.start();
    const tripwire = await ProxyTripwire.start();
    const project = new ClaudeProject(mock.url, tripwire.url);
    try {
      const turns = await runAgentSdk(
        {
          hooks: 'record',
          cwd: project.dir,
          env: project.env(),
          prompts: ['Rule: never use tabs. Say hi', 'message 2', '/compact keep it', 'after'],
        },
        { HOME: project.home },
      );
      expect(turns.map((t) => t.result.is_error)).toEqual([false, false, false, false]);
      const compact = turns[2]!.hookInputs.map(
        (i) => `${i.hook_event_name}:${'source' in i ? i.source : 'trigger' in i ? i.trigger : ''}`,
      );
      expect(compact).toEqual(
        expect.arrayContaining(['PreCompact:manual', 'SessionStart:compact', 'PostCompact:manual']),
      );
      expect(mock.requests.map((r) => r.kind)).toEqual(['turn', 'turn', 'summary', 'turn']);
      expect(mock.requests[3]!.raw).toContain('SDK-HOOK-OUTPUT-compact');
      expect(mock.requests[3]!.raw).not.toContain('Rule: never use tabs');
      expect(tripwire.attempts).toEqual([]);
    } finally {
      await mock.close();
      await tripwire.close();
      project.remove();
    }
  });
});
