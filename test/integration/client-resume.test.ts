/**
 * `resume` after a kill -9 of the orchestrator process: three child orchestrators in turn are
 * killed mid-stream (events in flight), each resumes from the snapshot the last one persisted;
 * the processor then sees no gap and no SEQ_CONFLICT, and a compaction is approved.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SessionSnapshot } from '../../src/client';
import { decodeOutput, readTopics } from './pipeline';
import { stack, type Stack, viewUntil } from './client/harness';

jest.setTimeout(240_000);

/** Runs the child orchestrator until it has reported `atLeast` turns more than `from`, then kills it. */
function runAndKill(
  s: Stack,
  file: string,
  sessionId: string,
  from: number,
  delayMs: number,
): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'client', 'orchestrator-child.ts')],
    {
      env: {
        ...process.env,
        CG_TEST_CONFIG: JSON.stringify(s.config),
        CG_TEST_SNAPSHOT: file,
        CG_TEST_SESSION: sessionId,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let reported = from;
    let killing = false;
    child.stdout.on('data', (d: Buffer) => {
      const last = /turns (\d+)\s*$/.exec(d.toString());
      if (last) reported = Number(last[1]);
      if (!killing && reported >= from + 30) {
        killing = true;
        // 0: in the pause after a batch (every event of it accepted, all still pending in the
        // snapshot); 15 ms: while the next 40 calls are in flight.
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    // Resolved only once it is gone: the next orchestrator must not meet it at the snapshot.
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(reported);
      else reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
}

describe('GuardedSession.resume after the orchestrator is killed', () => {
  let s: Stack;
  let dir: string;
  beforeAll(async () => {
    s = await stack();
    dir = mkdtempSync(path.join(tmpdir(), 'cg-resume-'));
  });
  afterAll(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('three kill -9 / resume cycles leave no gap and no SEQ_CONFLICT; a compaction afterwards is approved', async () => {
    const sessionId = `resume-${s.config.groupId}`;
    const file = path.join(dir, 'snapshot.json');
    let turns = 0;
    for (const delayMs of [0, 15, 0]) turns = await runAndKill(s, file, sessionId, turns, delayMs);
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as SessionSnapshot;
    const session = await s.client.resume(snapshot);
    for (let i = 0; i < 10; i++) await session.appendTurn({ role: 'ASSISTANT', tokens: 3 });
    const t = session.turns - 4;
    const verdict = await session.requestCompaction({
      requestId: 'after-resume',
      summaryInput: { start: 0, end: t },
      tailStart: t,
    });
    expect(verdict).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    const view = await viewUntil(s, sessionId, (v) => v.lastSeq === session.seq - 1);
    expect(view).toMatchObject({ gapHead: null, head: { TURNS: session.turns } });
    expect(session.turns).toBeGreaterThanOrEqual(turns + 10);
    // A last event whose audit record marks the end of this session's audit stream.
    await session.lossAcknowledged({
      unit: 'TURNS',
      range: { start: 0, end: 0 },
      by: 'test',
      reason: 'end marker',
    });
    const audit = await readTopics([s.config.auditTopic], (rs) =>
      rs.some(
        (r) =>
          r.key === sessionId &&
          decodeOutput(s.config, r).record === 'audit' &&
          (decodeOutput(s.config, r) as { code: string }).code === 'LOSS_ACKNOWLEDGED',
      ),
    );
    const codes = audit
      .filter((r) => r.key === sessionId)
      .map((r) => (decodeOutput(s.config, r) as { code: string }).code);
    expect(codes).toContain('LOSS_ACKNOWLEDGED');
    expect(codes).not.toContain('SEQ_CONFLICT');
  });
});
