/**
 * examples/orchestrator.ts, examples/langchain-agent.ts and examples/ai-sdk-agent.ts run as a
 * user runs them (`npx tsx`, settings from the environment as for `compaction-guard run`) against
 * a real processor with a trusted key ring (contract §4b), and print the refusal, the spill's
 * approval, the commit and their counts: their GuardClient signs the spill answers with the key
 * in CG_SIGNING_KEY_FILE.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { TOPIC_KEYS, configEnv } from '../../src/config/config';
import { start, testConfig } from './pipeline';
import { testKeys } from './client/harness';
import type { Running } from '../../src/cli/run';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '../..');

describe('the client examples', () => {
  const keys = testKeys();
  const config = testConfig({ trustedKeysFile: keys.ring, allowUnsigned: false });
  let running: Running;
  let spills: string;
  beforeAll(async () => {
    running = await start(config);
    spills = mkdtempSync(path.join(tmpdir(), 'cg-ex-'));
  });
  afterAll(async () => {
    await running?.stop();
    rmSync(spills, { recursive: true, force: true });
  });

  /**
   * Runs the example; `spilled`: the session directories its spills added to the store (named
   * by the sha256 of the sessionId, src/client/spill.ts).
   */
  function run(
    example: string,
  ): Promise<{ status: number | null; stdout: string; stderr: string; spilled: string[] }> {
    const before = new Set(readdirSync(spills));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CG_SPILL_DIR: spills,
      CG_SIGNING_KEY_FILE: keys.keyFile(keys.orchestrator),
      ...configEnv(config, ['brokers', 'registryUrl', ...TOPIC_KEYS]),
    };
    // Asynchronous: the processor runs in this process and must keep running meanwhile.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('examples', example)], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    return new Promise((resolve) =>
      child.on('exit', (status) =>
        resolve({
          status,
          stdout,
          stderr,
          spilled: readdirSync(spills).filter((d) => !before.has(d)),
        }),
      ),
    );
  }

  it('orchestrator.ts: REFUSE/SPILL for the seed incident, then APPROVE LOSSLESS_SPILL, compacted and committed', async () => {
    const r = await run('orchestrator.ts');
    expect(r).toMatchObject({ status: 0 });
    expect(r.stdout).toMatch(/verdict: REFUSE SPILL .*EVICTED_PINNED at TURNS \[1,2\)/);
    expect(r.stdout).toMatch(/verdict: APPROVE NONE LOSSLESS_SPILL/);
    expect(r.stdout).toMatch(/compacted and committed/);
  });

  it('langchain-agent.ts: the summary is refused until the history is spilled, then it goes ahead', async () => {
    const r = await run('langchain-agent.ts');
    expect(r).toMatchObject({ status: 0 });
    expect(r.stdout).toMatch(/verdict: REFUSE SPILL .*EVICTED_PINNED at MESSAGES \[0,1\)/);
    expect(r.stdout).toMatch(/verdict: APPROVE NONE LOSSLESS_SPILL/);
    expect(r.stdout).toMatch(/the first: Here is a summary/);
    expect(r.stdout).toMatch(/summary held back \(SUMMARIZER_THREW\), history intact/);
    expect(r.stdout).toMatch(
      /the second, kept verbatim: You must never delete anything under \/prod/,
    );
    expect(r.stdout).toMatch(
      /compactions: 1 committed, 1 pinned message\(s\) kept verbatim, held back: .*"SUMMARIZER_THREW":1/,
    );
    expect(r.spilled).toHaveLength(1);
  });

  it('ai-sdk-agent.ts: a failed summary is held back, the next is refused until the history is spilled, then committed with the rule kept verbatim', async () => {
    const r = await run('ai-sdk-agent.ts');
    expect(r).toMatchObject({ status: 0 });
    expect(r.stdout).toMatch(/summary held back \(ERROR_SUMMARY\), messages kept/);
    expect(r.stdout).toMatch(/verdict: REFUSE SPILL .*EVICTED_PINNED at MESSAGES \[0,1\)/);
    expect(r.stdout).toMatch(/verdict: APPROVE NONE LOSSLESS_SPILL/);
    expect(r.stdout).toMatch(/the rule reached the model verbatim in its last call: true/);
    expect(r.stdout).toMatch(
      /compactions: 1 committed, 1 pinned message\(s\) kept verbatim, held back: .*"ERROR_SUMMARY":1/,
    );
    expect(r.stdout).toMatch(/final answer: All 25 logs read/);
    expect(r.spilled).toHaveLength(1);
  });
});
