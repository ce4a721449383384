/**
 * Issue 28, item 3, on a real broker, registry and processor with a trusted key ring: a spill
 * request is a request, not a proof (contract §4b, rev 12). Anyone who can write the input
 * topic can forge a CompactionRequested for any session with summaryInput.end 2^52 − 1, and the
 * processor then asks for a spill over [0, 2^52 − 1). The SpillWorker, running with its own SPILL
 * key, signed that whole range while storing 36 bytes. Now it signs only what it stored and read
 * back: a session it holds no transcript of gets a SpillFailed, and one it holds 3 turns of gets
 * a SpillCompleted over those 3 turns; either way the session is not approved afterwards.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileSpillStore, SpillWorker } from '../../src/client';
import type { CompactionRequested, ContextEvent } from '../../src/engine/events';
import type { RegistryCodec } from '../../src/registry/codec';
import { codecFor, decodeOutput, produceEvents, readTopics } from './pipeline';
import { type Stack, type TestKeys, signedStack, testKeys } from './client/harness';

jest.setTimeout(240_000);

const HUGE = 2 ** 52 - 1;
/** 12 bytes a turn: the 3 turns the worker holds of the "known" session are 36 bytes. */
const line = (turn: number) => `turn ${String(turn).padStart(6, '0')}\n`;

describe('a SpillWorker signs only what it stored, whatever range a forged request makes the processor ask for', () => {
  let keys: TestKeys;
  let s: Stack;
  let dir: string;
  let store: FileSpillStore;
  let worker: SpillWorker;
  let codec: RegistryCodec;
  /** The transcripts the worker's source holds, by session: one line per turn. */
  const held = new Map<string, string[]>();

  beforeAll(async () => {
    keys = testKeys();
    s = await signedStack(keys);
    dir = mkdtempSync(path.join(tmpdir(), 'cg-spill-vouch-'));
    store = new FileSpillStore(dir);
    worker = new SpillWorker(s.client, {
      signingKey: keys.spillService.key,
      store,
      groupId: `workers-${s.config.groupId}`,
      source: (r) =>
        held.get(r.sessionId)?.map((content, turn) => ({
          positions: { TURNS: { start: turn, end: turn + 1 } },
          content,
        })) ?? null,
    });
    await worker.start();
    codec = codecFor(s.config);
  });

  afterAll(async () => {
    await worker.stop();
    await s.stop();
    codec.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What anyone who can write the input topic can send: a request naming [0, 2^52 − 1). */
  const forged = (sessionId: string, seq: number, requestId: string): CompactionRequested => ({
    type: 'CompactionRequested',
    sessionId,
    seq,
    eventId: randomUUID(),
    occurredAt: Date.now(),
    requestId,
    unit: 'TURNS',
    summaryInput: { start: 0, end: HUGE },
    tailStart: HUGE,
    occupancyTokens: null,
  });

  /** The session's input events (the forged ones and the worker's answer), once `n` are there. */
  async function inputOf(sessionId: string, n: number): Promise<ContextEvent[]> {
    const records = await readTopics(
      [s.config.inputTopic],
      (rs) => rs.filter((r) => r.key === sessionId).length >= n,
    );
    const events: ContextEvent[] = [];
    for (const r of records.filter((r) => r.key === sessionId)) {
      const decoded = await codec.decodeEvent(r.value!);
      if (!decoded.ok) throw new Error(`input record of ${sessionId}: ${decoded.error.message}`);
      events.push(decoded.event);
    }
    return events;
  }

  /** The session's verdicts, once `n` are there. */
  async function verdictsOf(sessionId: string, n: number) {
    const records = await readTopics(
      [s.config.verdictTopic],
      (rs) => rs.filter((r) => r.key === sessionId).length >= n,
    );
    return records.filter((r) => r.key === sessionId).map((r) => decodeOutput(s.config, r));
  }

  /** The spill request the forged request led to. */
  async function spillRequestOf(sessionId: string) {
    const records = await readTopics([s.config.spillTopic], (rs) =>
      rs.some((r) => r.key === sessionId),
    );
    return decodeOutput(
      s.config,
      records.find((r) => r.key === sessionId)!,
    );
  }

  it('a session the worker holds no transcript of, asked over [0, 2^52 − 1): a signed SpillFailed, no SpillCompleted, and the next request is refused', async () => {
    const sessionId = `forged-${s.config.groupId}`;
    await produceEvents(s.config, [forged(sessionId, 0, 'forged-1')], codec);
    // The processor did ask for the huge range: the request is what a forger controls.
    expect(await spillRequestOf(sessionId)).toMatchObject({
      record: 'spill-request',
      unit: 'TURNS',
      range: { start: 0, end: HUGE },
    });
    const events = await inputOf(sessionId, 2);
    const answers = events.filter((e) => e.seq === null);
    expect(answers).toEqual([
      expect.objectContaining({
        type: 'SpillFailed',
        error: expect.stringContaining('no transcript of this session'),
        signature: expect.objectContaining({ keyId: keys.spillService.entry.keyId }),
      }),
    ]);
    // The answer is in the log before this request: the processor has applied it.
    await produceEvents(s.config, [forged(sessionId, 1, 'forged-2')], codec);
    const verdicts = await verdictsOf(sessionId, 2);
    expect(verdicts.map((v) => (v.record === 'verdict' ? v.decision : v.record))).toEqual([
      'REFUSE',
      'REFUSE',
    ]);
  });

  it('a session the worker holds 3 turns (36 bytes) of, asked over [0, 2^52 − 1): a SpillCompleted over TURNS [0,3) only, its handle gives back those bytes, and the next request is refused', async () => {
    const sessionId = `held-${s.config.groupId}`;
    held.set(sessionId, [line(0), line(1), line(2)]);
    await produceEvents(s.config, [forged(sessionId, 0, 'forged-1')], codec);
    const events = await inputOf(sessionId, 2);
    const answers = events.filter((e) => e.seq === null);
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer).toMatchObject({
      type: 'SpillCompleted',
      unit: 'TURNS',
      range: { start: 0, end: 3 },
      signature: expect.objectContaining({ keyId: keys.spillService.entry.keyId }),
    });
    if (answer.type !== 'SpillCompleted') throw new Error('unreachable');
    const back = await store.read(answer.handle);
    expect(back.length).toBe(36);
    expect(back.toString()).toBe(line(0) + line(1) + line(2));
    await produceEvents(s.config, [forged(sessionId, 1, 'forged-2')], codec);
    const verdicts = await verdictsOf(sessionId, 2);
    expect(verdicts.map((v) => (v.record === 'verdict' ? v.decision : v.record))).toEqual([
      'REFUSE',
      'REFUSE',
    ]);
  });
});
