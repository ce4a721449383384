/**
 * The key files of contract §4b: `keys new` (files, modes, the ring it adds to, what it refuses),
 * the ring in force of a processor (load, reload, a failed reload keeping the old ring), and
 * `audit --trusted-keys` stopping before any input is read when the ring does not read.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { authorityFailure } from '../../src/engine/authority';
import type { LossAcknowledged } from '../../src/engine/events';
import { loadKeyRing } from '../../src/authority/ring';
import { loadSigningKey, signed } from '../../src/authority/signing';
import { keysNew } from '../../src/cli/keys';
import { KeyRingInForce, requireAuthority } from '../../src/authority/keyRingInForce';
import { createDevelopmentKeys } from '../../src/authority/developmentKeys';
import { BIN, runCli } from '../support/cli';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'cg-keys-'));

const ack = (over: Partial<LossAcknowledged> = {}): LossAcknowledged => ({
  type: 'LossAcknowledged',
  sessionId: 's-1',
  seq: null,
  eventId: 'e-1',
  occurredAt: 1_000,
  unit: 'TURNS',
  range: { start: 0, end: 8 },
  by: 'alice',
  reason: 'r',
  signature: null,
  ...over,
});

/** A pino logger whose lines are kept, parsed. */
function captured() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('keys new', () => {
  it('writes NAME.key (0600) and NAME.pub.json, and the key it wrote signs what the ring it added to accepts', () => {
    const dir = tmp();
    const ring = path.join(dir, 'ring.json');
    const said: string[] = [];
    keysNew({ name: 'alice', roles: 'acknowledge', out: path.join(dir, 'keys'), ring }, (l) =>
      said.push(l),
    );
    const keyFile = path.join(dir, 'keys', 'alice.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dir, 'keys')).mode & 0o077).toBe(0);
    const entry = JSON.parse(readFileSync(path.join(dir, 'keys', 'alice.pub.json'), 'utf8'));
    expect(entry).toMatchObject({ name: 'alice', roles: ['ACKNOWLEDGE'] });
    expect(JSON.parse(readFileSync(ring, 'utf8'))).toEqual({ keys: [entry] });
    expect(said.join('\n')).toContain(`keyId ${entry.keyId as string}`);

    const key = loadSigningKey(keyFile);
    expect([key.keyId, key.name]).toEqual([entry.keyId, 'alice']);
    const trusted = loadKeyRing(ring);
    const event = signed(ack(), key, 5_000);
    expect(authorityFailure(event, trusted, null)).toBeNull();
    // The role is the ring's: the same key cannot answer a spill request.
    const spill = signed(
      {
        type: 'SpillFailed',
        sessionId: 's-1',
        seq: null,
        eventId: 'e-2',
        occurredAt: 1_000,
        spillRequestId: 's-1:c:3',
        error: 'x',
        signature: null,
      },
      key,
      5_000,
    );
    expect(authorityFailure(spill, trusted, null)).toBe('key without the role');
  });

  it('a second key joins the ring; a name already in it is refused and nothing is written', () => {
    const dir = tmp();
    const ring = path.join(dir, 'ring.json');
    keysNew({ name: 'alice', roles: 'ACKNOWLEDGE', out: dir, ring }, () => undefined);
    keysNew({ name: 'spiller', roles: 'SPILL', out: dir, ring }, () => undefined);
    expect(loadKeyRing(ring).size).toBe(2);
    const before = readdirSync(dir).sort();
    const other = path.join(dir, 'elsewhere');
    expect(() =>
      keysNew({ name: 'alice', roles: 'ACKNOWLEDGE', out: other, ring }, () => undefined),
    ).toThrow(/already has a key named alice .*nothing was written/);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(loadKeyRing(ring).size).toBe(2);
  });

  it.each([
    ['a name that leaves the directory', { name: '../x' }, /--name: expected 1 to 128 letters/],
    ['a hidden file name', { name: '.hidden' }, /--name: expected/],
    ['an unknown role', { roles: 'ADMIN' }, /--roles: expected ACKNOWLEDGE, SPILL/],
    ['no role', { roles: '' }, /--roles: required/],
    ['no --out', { out: undefined }, /--out: required/],
  ])('refuses %s, writing nothing', (_what, patch, message) => {
    const dir = tmp();
    expect(() =>
      keysNew({ name: 'k', roles: 'SPILL', out: dir, ...patch }, () => undefined),
    ).toThrow(message);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('never replaces a key file that exists (a key file lost is a key lost)', () => {
    const dir = tmp();
    keysNew({ name: 'k', roles: 'SPILL', out: dir }, () => undefined);
    const before = readFileSync(path.join(dir, 'k.key'), 'utf8');
    expect(() => keysNew({ name: 'k', roles: 'SPILL', out: dir }, () => undefined)).toThrow(
      /k\.key already exists/,
    );
    expect(readFileSync(path.join(dir, 'k.key'), 'utf8')).toBe(before);
  });

  it('refuses to add to a ring that does not read (no key is written)', () => {
    const dir = tmp();
    const ring = path.join(dir, 'ring.json');
    writeFileSync(ring, '{"keys": []}');
    expect(() =>
      keysNew({ name: 'k', roles: 'SPILL', out: path.join(dir, 'out'), ring }, () => undefined),
    ).toThrow(/at least one key/);
    expect(readdirSync(dir)).toEqual(['ring.json']);
  });

  it('as a command: exit 2 and one line for a bad role', async () => {
    const r = await runCli(['keys', 'new', '--name', 'k', '--roles', 'ROOT', '--out', tmp()], {
      PATH: process.env.PATH,
    });
    expect([r.code, r.stderr.trim().split('\n')]).toEqual([
      2,
      [expect.stringMatching(/^compaction-guard keys new: .*--roles: expected ACKNOWLEDGE/)],
    ]);
  });
});

describe('the ring in force (CG_TRUSTED_KEYS_FILE)', () => {
  it('without a ring and without CG_ALLOW_UNSIGNED=true, start-up is refused naming CG_TRUSTED_KEYS_FILE', () => {
    expect(() => requireAuthority({ trustedKeysFile: null, allowUnsigned: false })).toThrow(
      /CG_TRUSTED_KEYS_FILE .*is not set.*CG_ALLOW_UNSIGNED=true/,
    );
    expect(() => requireAuthority({ trustedKeysFile: null, allowUnsigned: true })).not.toThrow();
  });

  it('CG_ALLOW_UNSIGNED=true: no ring, said at warn, and the observer is told (the gauge)', () => {
    const { log, lines } = captured();
    const r = KeyRingInForce.load({ trustedKeysFile: null, allowUnsigned: true }, log);
    const told: (number | null)[] = [];
    r.observe({ keyRing: (k) => told.push(k) });
    expect(r.current).toBeNull();
    expect(told).toEqual([null]);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/CG_ALLOW_UNSIGNED=true/) }),
    ]);
  });

  it('logs the keyIds in force at start; a reload takes a revocation; a reload that fails keeps the keys in force and says so at error', () => {
    const dir = tmp();
    const ring = path.join(dir, 'ring.json');
    keysNew({ name: 'alice', roles: 'ACKNOWLEDGE', out: dir, ring }, () => undefined);
    keysNew({ name: 'bob', roles: 'ACKNOWLEDGE', out: dir, ring }, () => undefined);
    const alice = loadSigningKey(path.join(dir, 'alice.key'));
    const { log, lines } = captured();
    const r = KeyRingInForce.load({ trustedKeysFile: ring, allowUnsigned: false }, log);
    const reloads: string[] = [];
    r.observe({ keyRingReload: (o) => reloads.push(o) });
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'trusted key ring in force',
      keys: [
        { keyId: alice.keyId, name: 'alice', roles: ['ACKNOWLEDGE'] },
        expect.objectContaining({ name: 'bob' }),
      ],
    });
    const event = signed(ack(), alice, 5_000);
    expect(authorityFailure(event, r.current!, null)).toBeNull();

    // Revoke alice: the file without her entry, then a reload.
    const file = JSON.parse(readFileSync(ring, 'utf8')) as { keys: { name: string }[] };
    writeFileSync(ring, JSON.stringify({ keys: file.keys.filter((k) => k.name !== 'alice') }));
    expect(r.reload()).toBe(true);
    expect(authorityFailure(event, r.current!, null)).toBe('unknown key');
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'trusted key ring reloaded' });

    // A broken edit: the ring in force stays (bob still trusted), an error is logged.
    const inForce = r.current;
    writeFileSync(ring, '{"keys": [');
    expect(r.reload()).toBe(false);
    expect(r.current).toBe(inForce);
    expect(lines.at(-1)).toMatchObject({
      level: 50,
      msg: expect.stringMatching(/reload failed: the keys in force stay/),
      err: expect.stringMatching(/not JSON/),
    });
    expect(reloads).toEqual(['loaded', 'failed']);
  });

  it("npm start's development keys: a fresh key with both roles and a ring of it alone, made again at every start", () => {
    const dir = path.join(tmp(), 'dev-keys');
    const first = createDevelopmentKeys(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(first.signingKeyFile).mode & 0o777).toBe(0o600);
    const ring = loadKeyRing(first.trustedKeysFile);
    expect([...ring.values()].map((k) => [k.keyId, k.roles])).toEqual([
      [first.keyId, ['ACKNOWLEDGE', 'SPILL']],
    ]);
    const second = createDevelopmentKeys(dir);
    expect(second.keyId).not.toBe(first.keyId);
    expect(loadKeyRing(second.trustedKeysFile).has(first.keyId)).toBe(false);
  });
});

describe('audit --trusted-keys', () => {
  it('a ring that does not read stops it with exit 2 before any input is read (stdin stays open)', async () => {
    const dir = tmp();
    const bad = path.join(dir, 'ring.json');
    writeFileSync(
      bad,
      '{"keys": [{"keyId": "k", "name": "n", "publicKey": "AAAA", "roles": ["SPILL"]}]}',
    );
    for (const ring of [bad, path.join(dir, 'absent.json')]) {
      // stdin is never ended: an audit that began reading it would not exit.
      const child = spawn(process.execPath, [BIN, 'audit', '--trusted-keys', ring, '-'], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.stdin.destroy();
      expect([code, stderr.trim().split('\n')]).toEqual([
        2,
        [expect.stringMatching(/^compaction-guard audit: trusted key ring .*(ring|absent)\.json/)],
      ]);
    }
  });
});
