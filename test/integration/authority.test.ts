/**
 * The processor's authority settings (contract §4b) as an operator meets them, on `run` as a
 * child process against the real broker and registry: CG_ALLOW_UNSIGNED=true is said at warn and
 * exported as a gauge; with CG_TRUSTED_KEYS_FILE the keyIds in force are logged, and SIGHUP
 * re-reads the ring: a revoked key authorizes nothing from then on, and a ring file broken by an
 * edit keeps the keys in force (logged at error, counted). (The refusal to start without either
 * is in first-hour.test.ts, with the other start-up failures.)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LossAcknowledged } from '../../src/engine/events';
import { SEED_POLICY, seedIncident } from '../support/sessionBuilder';
import { ringText, signedBy, testKey, type TestKey } from '../support/keys';
import {
  type Consumed,
  codecFor,
  decodeOutput,
  produceEvents,
  readTopics,
  testConfig,
} from './pipeline';
import { type Child, faultLogFile, spawnProcessor, waitFor } from './faults/harness';

jest.setTimeout(180_000);

type LogLine = { level: number; msg: string } & Record<string, unknown>;
const logLines = (file: string): LogLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

async function metric(child: Child, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${child.httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

async function ready(child: Child): Promise<void> {
  await waitFor(
    'the processor ready',
    async () =>
      (await fetch(`http://127.0.0.1:${child.httpPort}/readyz`).catch(() => null))?.status === 200,
    90_000,
  );
}

async function stop(child: Child): Promise<number | null> {
  child.proc.kill('SIGTERM');
  return child.exited;
}

describe('run and its trusted key ring', () => {
  const children: Child[] = [];
  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null) await stop(c);
  });

  it('CG_ALLOW_UNSIGNED=true without a ring: one warn line says unsigned events are applied, and compaction_guard_unsigned_allowed is 1', async () => {
    const c = testConfig({ allowUnsigned: true });
    const log = faultLogFile('unsigned');
    const child = await spawnProcessor(c, log, { CG_LOG_LEVEL: 'info' });
    children.push(child);
    await ready(child);
    expect(await metric(child, 'compaction_guard_unsigned_allowed')).toBe(1);
    expect(await metric(child, 'compaction_guard_trusted_keys')).toBe(0);
    const warned = logLines(log).filter((l) => /CG_ALLOW_UNSIGNED/.test(l.msg));
    expect(warned).toEqual([
      expect.objectContaining({
        level: 40,
        msg: expect.stringMatching(
          /unsigned SpillCompleted, SpillFailed and LossAcknowledged are applied/,
        ),
      }),
    ]);
    expect(await stop(child)).toBe(0);
  });

  it('SIGHUP re-reads the ring: a revoked key authorizes nothing from then on; a broken ring file keeps the keys in force (error logged, reload counted failed)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-ring-'));
    const ring = path.join(dir, 'ring.json');
    const alice = testKey('alice', ['ACKNOWLEDGE']);
    const bob = testKey('bob', ['ACKNOWLEDGE']);
    writeFileSync(ring, ringText(alice, bob));
    const c = testConfig({ trustedKeysFile: ring, allowUnsigned: false });
    const log = faultLogFile('sighup');
    const child = await spawnProcessor(c, log, { CG_LOG_LEVEL: 'info' });
    children.push(child);
    await ready(child);
    expect(logLines(log).find((l) => l.msg === 'trusted key ring in force')).toMatchObject({
      level: 30,
      file: ring,
      keys: [
        { keyId: alice.entry.keyId, name: 'alice', roles: ['ACKNOWLEDGE'] },
        { keyId: bob.entry.keyId, name: 'bob', roles: ['ACKNOWLEDGE'] },
      ],
    });
    expect(await metric(child, 'compaction_guard_unsigned_allowed')).toBe(0);
    expect(await metric(child, 'compaction_guard_trusted_keys')).toBe(2);

    // Three sessions HALT on the seed's incident (spills disabled).
    const ids = ['a', 'b', 'c'].map((x) => `sighup-${x}-${randomUUID().slice(0, 8)}`);
    const codec = codecFor(c);
    try {
      await produceEvents(
        c,
        ids.flatMap(
          (id) => seedIncident(id, { ...SEED_POLICY, spill: 'DISABLED' }, Date.now()).events,
        ),
        codec,
      );
      const ack = (id: string, key: TestKey): LossAcknowledged =>
        signedBy(
          {
            type: 'LossAcknowledged',
            sessionId: id,
            seq: null,
            eventId: randomUUID(),
            occurredAt: Date.now(),
            unit: 'TURNS',
            range: { start: 0, end: 8 },
            by: key.entry.name,
            reason: 'the user re-stated the rule',
            signature: null,
          },
          key,
          Date.now() + 15 * 60_000,
        );
      /** The audit record the processor wrote for `id`'s acknowledgement. */
      const answerOf = async (id: string) => {
        const answers = (rs: Consumed[]) =>
          rs
            .filter((r) => r.key === id)
            .map((r) => decodeOutput(c, r))
            .filter(
              (r) =>
                r.record === 'audit' &&
                (r.code === 'LOSS_ACKNOWLEDGED' || r.code === 'UNAUTHORIZED_EVENT'),
            );
        return answers(await readTopics([c.auditTopic], (rs) => answers(rs).length > 0, 30_000));
      };
      const reloaded = (msg: string, n: number) =>
        waitFor(
          `${n} log line(s) "${msg}"`,
          async () => logLines(log).filter((l) => l.msg.startsWith(msg)).length === n,
          20_000,
        );

      // Alice may: the first session's loss is written off.
      await produceEvents(c, [ack(ids[0]!, alice)], codec);
      expect(await answerOf(ids[0]!)).toEqual([
        expect.objectContaining({ kind: 'ADVISORY', code: 'LOSS_ACKNOWLEDGED' }),
      ]);

      // Alice is revoked: the ring file without her, then SIGHUP.
      writeFileSync(ring, ringText(bob));
      child.proc.kill('SIGHUP');
      await reloaded('trusted key ring reloaded', 1);
      expect(logLines(log).find((l) => l.msg === 'trusted key ring reloaded')).toMatchObject({
        level: 30,
        keys: [{ keyId: bob.entry.keyId, name: 'bob', roles: ['ACKNOWLEDGE'] }],
      });
      expect(await metric(child, 'compaction_guard_trusted_keys')).toBe(1);
      expect(await metric(child, 'compaction_guard_key_ring_reloads_total{outcome="loaded"}')).toBe(
        1,
      );
      await produceEvents(c, [ack(ids[1]!, alice)], codec);
      expect(await answerOf(ids[1]!)).toEqual([
        expect.objectContaining({
          kind: 'VIOLATION',
          code: 'UNAUTHORIZED_EVENT',
          message: expect.stringMatching(/not applied: unknown key/),
        }),
      ]);

      // An edit that breaks the file: the reload fails, the keys in force stay (bob still may).
      writeFileSync(ring, '{"keys": [');
      child.proc.kill('SIGHUP');
      await reloaded('trusted key ring reload failed', 1);
      expect(
        logLines(log).find((l) => l.msg.startsWith('trusted key ring reload failed')),
      ).toMatchObject({ level: 50, file: ring, err: expect.stringMatching(/not JSON/) });
      expect(await metric(child, 'compaction_guard_key_ring_reloads_total{outcome="failed"}')).toBe(
        1,
      );
      await produceEvents(c, [ack(ids[2]!, bob)], codec);
      expect(await answerOf(ids[2]!)).toEqual([
        expect.objectContaining({ kind: 'ADVISORY', code: 'LOSS_ACKNOWLEDGED' }),
      ]);
      expect(child.proc.exitCode).toBeNull();
    } finally {
      codec.close();
    }
    expect(await stop(child)).toBe(0);
  });
});
