/** Shared pieces of the client tests: a processor on unique topics and clients that reach it. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../../src/config/config';
import {
  type NewKey,
  keyFilesOf,
  newKey,
  writeAtomically,
  writeKeyFiles,
} from '../../../src/authority/keyFiles';
import type { Policy, Unit } from '../../../src/engine/events';
import { GuardClient, type GuardClientOptions } from '../../../src/client';
import { start, testConfig } from '../pipeline';
import type { Running } from '../../../src/cli/run';

export function policy(unit: Unit, span = 4, spill: Policy['spill'] = 'ENABLED'): Policy {
  return {
    windowTokens: 200_000,
    triggerTokens: 150_000,
    ceilingTokens: 160_000,
    floor: { unit, span },
    truncatorUnit: unit,
    coverage: 'STRICT',
    spill,
  };
}

/** A client of `c` that reads no environment (the test's config is all it knows). */
export async function clientFor(c: Config, options: GuardClientOptions = {}): Promise<GuardClient> {
  const client = new GuardClient({ env: {}, config: c, ...options });
  await client.connect();
  return client;
}

/** The signers of a deployment (contract §4b), their key files and the processor's ring. */
export interface TestKeys {
  /** The orchestrator's key (SPILL: its in-band spill answers). */
  orchestrator: NewKey;
  /** An operator's (ACKNOWLEDGE). */
  operator: NewKey;
  /** A separate spill service's (SPILL). */
  spillService: NewKey;
  /** `<dir>/<name>.key` of each. */
  keyFile(k: NewKey): string;
  /** The ring file holding the three. */
  ring: string;
}

/** Three keys as `compaction-guard keys new` writes them, and a ring of them, in a temp dir. */
export function testKeys(): TestKeys {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-keys-'));
  const orchestrator = newKey('orchestrator', ['SPILL']);
  const operator = newKey('oncall', ['ACKNOWLEDGE']);
  const spillService = newKey('spill-service', ['SPILL']);
  const all = [orchestrator, operator, spillService];
  for (const k of all) writeKeyFiles(dir, k);
  const ring = path.join(dir, 'ring.json');
  writeAtomically(ring, JSON.stringify({ keys: all.map((k) => k.entry) }), 0o644);
  return {
    orchestrator,
    operator,
    spillService,
    keyFile: (k) => keyFilesOf(dir, k.key.name).keyFile,
    ring,
  };
}

export interface Stack {
  config: Config;
  running: Running;
  client: GuardClient;
  /** The processor's /sessions/{id} view. */
  view(sessionId: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * A processor with the ring of `keys` (no unsigned event accepted, contract §4b) and a client
 * that signs with the orchestrator's key.
 */
export function signedStack(
  keys: TestKeys,
  overrides: Partial<Config> = {},
  options: GuardClientOptions = {},
): Promise<Stack> {
  return stack(
    { trustedKeysFile: keys.ring, allowUnsigned: false, ...overrides },
    { signingKey: keys.orchestrator.key, ...options },
  );
}

export async function stack(
  overrides: Partial<Config> = {},
  options: GuardClientOptions = {},
): Promise<Stack> {
  const config = testConfig(overrides);
  const running = await start(config);
  const client = await clientFor(config, options);
  return {
    config,
    running,
    client,
    async view(sessionId) {
      const res = await fetch(
        `http://127.0.0.1:${running.httpPort}/sessions/${encodeURIComponent(sessionId)}`,
      );
      if (res.status !== 200) throw new Error(`/sessions/${sessionId}: HTTP ${res.status}`);
      return (await res.json()) as Record<string, unknown>;
    },
    async stop() {
      await client.close();
      await running.stop();
    },
  };
}

/** Waits until the processor's view of a session satisfies `ok` (its state follows the input). */
export async function viewUntil(
  s: Stack,
  sessionId: string,
  ok: (v: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> | null = null;
  for (;;) {
    try {
      last = await s.view(sessionId);
      if (ok(last)) return last;
    } catch {
      // 404 until the session's first event is processed
    }
    if (Date.now() > deadline)
      throw new Error(`session ${sessionId} never matched; last view ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
