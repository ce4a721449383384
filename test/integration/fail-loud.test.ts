/**
 * A client set up wrong against a processor with a trusted key ring learns why at once, on the
 * real broker, registry and processor: with only KAFKA_BROKERS and SCHEMA_REGISTRY_URL (no
 * signing key) its first refused retry fails with one line naming CG_SIGNING_KEY_FILE /
 * signingKey, and the processor's log says it once; a key the ring does not hold is named; a
 * client with the key compacts; a SpillWorker without a key says so once in its log; a verdict
 * topic that is not the processor's is said at connect; a spill store that cannot write fails
 * the call naming the store and the cause, and the session is not approved.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import {
  FileSpillStore,
  GuardClient,
  type GuardedSession,
  SpillNotTrustedError,
  SpillStoreError,
  SpillWorker,
  type Verdict,
} from '../../src/client';
import { newKey } from '../../src/authority/keyFiles';
import { type Running, startProcessor } from '../../src/cli/run';
import type { Config } from '../../src/config/config';
import { brokers, registryUrl, testConfig } from './pipeline';
import { type TestKeys, clientFor, policy, testKeys } from './client/harness';

jest.setTimeout(240_000);

/** A pino logger whose lines are kept (parsed). */
function capturedLog(level: string): { log: pino.Logger; lines: { level: number; msg: string }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level },
    { write: (s: string) => lines.push(JSON.parse(s) as { level: number; msg: string }) },
  );
  return { log, lines };
}

/** 52 turns (turn 1 pinned), turns [0,8) truncated: the request below is REFUSE/SPILL. */
async function refusedUntilSpilled(session: GuardedSession): Promise<void> {
  await session.open(policy('TURNS', 12));
  for (let t = 0; t < 52; t++)
    await session.appendTurn({ role: 'USER', tokens: 10, pins: t === 1 ? ['CONSTRAINT'] : [] });
  await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } });
}

const REQUEST = { requestId: 'c', summaryInput: { start: 8, end: 40 }, tailStart: 40 };
const transcript = (r: { firstTurn: number; endTurn: number }) =>
  Array.from({ length: r.endTurn - r.firstTurn }, (_, i) => `turn ${r.firstTurn + i}`);

describe('a processor with a trusted key ring, and clients set up wrong', () => {
  let keys: TestKeys;
  let config: Config;
  let running: Running;
  let processorLog: ReturnType<typeof capturedLog>;
  let dir: string;
  const clients: GuardClient[] = [];

  beforeAll(async () => {
    keys = testKeys();
    config = testConfig({ trustedKeysFile: keys.ring, allowUnsigned: false });
    processorLog = capturedLog('warn');
    running = await startProcessor(config, processorLog.log);
    dir = mkdtempSync(path.join(tmpdir(), 'cg-fail-loud-'));
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A client of the test's topics; `env` as a user outside the clone would set it. */
  async function client(
    options: ConstructorParameters<typeof GuardClient>[0],
  ): Promise<GuardClient> {
    const c = await clientFor(config, options);
    clients.push(c);
    return c;
  }

  it('only KAFKA_BROKERS and SCHEMA_REGISTRY_URL: the first refused retry fails with SpillNotTrustedError naming CG_SIGNING_KEY_FILE and signingKey; the processor logs it once', async () => {
    const { brokers: _b, registryUrl: _r, ...topics } = config;
    const c = new GuardClient({
      env: { KAFKA_BROKERS: brokers.join(','), SCHEMA_REGISTRY_URL: registryUrl },
      config: topics,
    });
    await c.connect();
    clients.push(c);
    expect(c.signingKey).toBeNull();
    const session = c.session(`no-key-${config.groupId}`);
    await refusedUntilSpilled(session);
    const seen: Verdict[] = [];
    const error = await session
      .requestCompaction(REQUEST, {
        spill: { store: new FileSpillStore(dir), transcript },
        onVerdict: (v) => seen.push(v),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpillNotTrustedError);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).toMatch(
      /did not apply the spill answer just sent \(SpillCompleted TURNS \[0,52\)\).*unsigned.*CG_SIGNING_KEY_FILE.*signingKey/,
    );
    // The first ask and the first retry: no second spill, no third ask.
    expect(seen.map((v) => `${v.decision}/${v.action}`)).toEqual(['REFUSE/SPILL', 'REFUSE/SPILL']);
    const warned = processorLog.lines.filter((l) => /UNAUTHORIZED_EVENT/.test(l.msg));
    expect(warned).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(
          new RegExp(
            `session no-key-${config.groupId}: SpillCompleted .* not applied: no signature.*CG_SIGNING_KEY_FILE`,
          ),
        ),
      }),
    ]);
  });

  it('a key the ring does not hold: SpillNotTrustedError naming the key and CG_TRUSTED_KEYS_FILE', async () => {
    const stranger = newKey('stranger', ['SPILL']);
    const c = await client({ signingKey: stranger.key });
    const session = c.session(`stranger-${config.groupId}`);
    await refusedUntilSpilled(session);
    await expect(
      session.requestCompaction(REQUEST, { spill: { store: new FileSpillStore(dir), transcript } }),
    ).rejects.toThrow(
      new RegExp(
        `signed by key ${stranger.key.keyId}: is that key in the processor's trusted key ring \\(CG_TRUSTED_KEYS_FILE\\) with role SPILL`,
      ),
    );
  });

  it('the same client given the key (role SPILL in the ring) compacts: APPROVE LOSSLESS_SPILL', async () => {
    const c = await client({ signingKey: keys.orchestrator.key });
    const session = c.session(`keyed-${config.groupId}`);
    await refusedUntilSpilled(session);
    const verdict = await session.requestCompaction(REQUEST, {
      spill: { store: new FileSpillStore(dir), transcript },
    });
    expect(verdict).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });

  it('a SpillWorker without a key: its log says once that the processor ignores its answers, naming CG_SIGNING_KEY_FILE / signingKey', async () => {
    const orchestrator = await client({ signingKey: keys.orchestrator.key });
    const workerLog = capturedLog('error');
    const worker = new SpillWorker(
      orchestrator,
      {
        signingKey: null,
        store: new FileSpillStore(dir),
        groupId: `workers-${config.groupId}`,
        source: (r) => [{ positions: { TURNS: r.range }, content: 'all turns' }],
      },
      workerLog.log,
    );
    await worker.start();
    try {
      const session = orchestrator.session(`worker-${config.groupId}`);
      await refusedUntilSpilled(session);
      const verdict = await session.requestCompaction(REQUEST, {
        awaitSpill: { pollMs: 200, timeoutMs: 8_000 },
      });
      expect(verdict).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
      expect(worker.answered).toBeGreaterThanOrEqual(2);
      expect(workerLog.lines.map((l) => l.msg)).toEqual([
        expect.stringMatching(
          /^SpillWorker: session .* did not apply .*unsigned.*CG_SIGNING_KEY_FILE.*signingKey/,
        ),
      ]);
    } finally {
      await worker.stop();
    }
  });

  it("a verdict topic that is not the processor's (it did not exist beside the input): created, and said at warn naming CG_VERDICT_TOPIC", async () => {
    const clientLog = capturedLog('warn');
    const c = await clientFor(
      { ...config, verdictTopic: `not-the-processors-${config.groupId}` },
      { logger: clientLog.log },
    );
    clients.push(c);
    expect(clientLog.lines.map((l) => l.msg)).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^the verdict topic not-the-processors-${config.groupId} \\(CG_VERDICT_TOPIC\\) did not exist although ${config.inputTopic} does`,
        ),
      ),
    );
  });

  it('a spill store that cannot write: SpillStoreError naming the store and the cause; the SpillFailed makes the next request HALT', async () => {
    const file = path.join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const store = new FileSpillStore(path.join(file, 'spills'));
    const c = await client({ signingKey: keys.orchestrator.key });
    const session = c.session(`store-${config.groupId}`);
    await refusedUntilSpilled(session);
    const error = await session
      .requestCompaction(REQUEST, { spill: { store, transcript } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpillStoreError);
    expect((error as Error).message).toMatch(
      /^spill store FileSpillStore\(.*not-a-directory\/spills\) could not write the spill of TURNS\[0,52\) of session .*ENOTDIR/,
    );
    // The SpillFailed was applied: the next request HALTs (no compaction), diagnostic and all.
    expect(
      await session.requestCompaction(
        { ...REQUEST, requestId: 'c2' },
        { spill: { store, transcript } },
      ),
    ).toMatchObject({
      decision: 'REFUSE',
      action: 'HALT',
      diagnostic: expect.stringContaining('the last spill failed'),
    });
  });
});
