/**
 * How the key files of contract §4b are read and written (docs/decisions.md 158, 159), on real
 * temporary files: writes never follow a link planted at any temporary or target name, and the
 * ring and signing keys are refused when someone else could change them (or read a key), with
 * a message naming the file, what is wrong and the fix.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { addToRing, newKey, writeKeyFiles } from '../../src/authority/keyFiles';
import { keyFileProblem, replaceKeyFile } from '../../src/authority/keyFileAccess';
import { KeyRingInForce } from '../../src/authority/keyRingInForce';
import { loadKeyRing } from '../../src/authority/ring';
import { loadSigningKey, signingKeyText } from '../../src/authority/signing';
import { keysNew } from '../../src/cli/keys';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'cg-keyfiles-'));
const VICTIM_TEXT = 'not yours to overwrite\n';

/** A file the writer must never touch, and a dangling name a link may point to. */
function victim(dir: string): string {
  const file = path.join(dir, 'victim');
  writeFileSync(file, VICTIM_TEXT);
  return file;
}

/** A ring file with one key, written as a user would, then given `mode`. */
function ringWithMode(dir: string, mode: number): string {
  const ring = path.join(dir, 'ring.json');
  writeFileSync(ring, JSON.stringify({ keys: [newKey('alice', ['ACKNOWLEDGE']).entry] }));
  chmodSync(ring, mode);
  return ring;
}

function keyWithMode(dir: string, mode: number): string {
  const file = path.join(dir, 'alice.key');
  writeFileSync(file, signingKeyText(newKey('alice', ['ACKNOWLEDGE']).key));
  chmodSync(file, mode);
  return file;
}

const silent = pino({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() }));

describe('key file writes do not follow planted links', () => {
  afterEach(() => jest.restoreAllMocks());

  it('keys new --ring does not write through a link planted at the old <ring>.<pid>.tmp name', () => {
    const dir = tmp();
    const target = victim(dir);
    const ring = path.join(dir, 'ring.json');
    symlinkSync(target, `${ring}.${process.pid}.tmp`);
    keysNew({ name: 'alice', roles: 'ACKNOWLEDGE', out: path.join(dir, 'keys'), ring }, () => {});
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(loadKeyRing(ring).size).toBe(1);
  });

  it('refuses to write through a link planted at the very temporary name it draws, leaving the target as it was', () => {
    const dir = tmp();
    const target = victim(dir);
    const ring = ringWithMode(dir, 0o644);
    const before = readFileSync(ring, 'utf8');
    const drawn = Buffer.from('0123456789abcdef', 'hex');
    // The module object itself (an `import *` namespace is a copy the code under test never sees).
    const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    jest.spyOn(crypto, 'randomBytes').mockImplementation(() => drawn);
    symlinkSync(target, path.join(dir, `.ring.json.${drawn.toString('hex')}.tmp`));
    expect(() => replaceKeyFile(ring, '{"keys": []}\n', 0o644)).toThrow(/EEXIST/);
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(readFileSync(ring, 'utf8')).toBe(before);
  });

  it('never writes a new private key through a link planted at its name (even a dangling one)', () => {
    const dir = tmp();
    const keys = path.join(dir, 'keys');
    keysNew({ name: 'first', roles: 'SPILL', out: keys }, () => {});
    const absent = path.join(dir, 'would-be-created');
    symlinkSync(absent, path.join(keys, 'alice.key'));
    expect(() => writeKeyFiles(keys, newKey('alice', ['SPILL']))).toThrow(/already exists/);
    expect(existsSync(absent)).toBe(false);
    expect(lstatSync(path.join(keys, 'alice.key')).isSymbolicLink()).toBe(true);
  });

  it('replaces a ring that is a link with a file of its own, leaving what the link pointed to untouched', () => {
    const dir = tmp();
    const target = victim(dir);
    const ring = path.join(dir, 'ring.json');
    symlinkSync(target, ring);
    replaceKeyFile(ring, '{"keys": []}\n', 0o644);
    expect(readFileSync(target, 'utf8')).toBe(VICTIM_TEXT);
    expect(lstatSync(ring).isFile()).toBe(true);
  });

  it('leaves no temporary file behind, and a replaced ring keeps its mode', () => {
    const dir = tmp();
    const ring = ringWithMode(dir, 0o600);
    addToRing(ring, newKey('bob', ['SPILL']).entry);
    expect(statSync(ring).mode & 0o777).toBe(0o600);
    expect(loadKeyRing(ring).size).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(['ring.json']);
  });
});

describe('key file reads refuse what others could change', () => {
  it('refuses a 0666 ring, naming the file, what is wrong and the fix (chmod go-w)', () => {
    const ring = ringWithMode(tmp(), 0o666);
    expect(() => loadKeyRing(ring)).toThrow(
      `trusted key ring ${ring} is refused: it is writable by group or others (mode 0666), so they could add a key to it. Fix: chmod go-w ${ring}`,
    );
  });

  it('keys new --ring refuses to add to a group-writable ring, writing nothing', () => {
    const dir = tmp();
    const ring = ringWithMode(dir, 0o664);
    const before = readFileSync(ring, 'utf8');
    expect(() =>
      keysNew({ name: 'bob', roles: 'SPILL', out: path.join(dir, 'keys'), ring }, () => {}),
    ).toThrow(/is refused: it is writable by group or others \(mode 0664\).*chmod go-w/);
    expect(readFileSync(ring, 'utf8')).toBe(before);
    expect(existsSync(path.join(dir, 'keys'))).toBe(false);
  });

  it('a processor does not start on, nor reload to, a world-writable ring (the reload keeps the ring in force)', () => {
    const dir = tmp();
    const ring = ringWithMode(dir, 0o602);
    const settings = { trustedKeysFile: ring, allowUnsigned: false };
    expect(() => KeyRingInForce.load(settings, silent)).toThrow(/chmod go-w/);
    chmodSync(ring, 0o600);
    const inForce = KeyRingInForce.load(settings, silent);
    const keys = inForce.current;
    chmodSync(ring, 0o606);
    expect(inForce.reload()).toBe(false);
    expect(inForce.current).toBe(keys);
  });

  it.each([
    [0o644, 'readable'],
    [0o640, 'readable'],
    [0o620, 'writable'],
  ])('refuses a signing key of mode %o (%s by others) with the fix chmod 600', (mode, how) => {
    const file = keyWithMode(tmp(), mode);
    expect(() => loadSigningKey(file)).toThrow(
      `signing key ${file} is refused: it is ${how} by group or others (mode ${mode.toString(8).padStart(4, '0')}): a private key must be yours alone. Fix: chmod 600 ${file}`,
    );
  });

  it('reads a 0600 signing key and a 0644 ring of its own', () => {
    const dir = tmp();
    expect(loadSigningKey(keyWithMode(dir, 0o600)).name).toBe('alice');
    expect(loadKeyRing(ringWithMode(dir, 0o644)).size).toBe(1);
  });

  it('refuses what is not a regular file (a directory at the ring path)', () => {
    const dir = tmp();
    expect(() => loadKeyRing(dir)).toThrow(
      `trusted key ring ${dir} is refused: it is not a regular file. Fix: give the path of the trusted key ring file itself`,
    );
  });

  it('quotes a path with spaces in the fix, so it can be pasted', () => {
    const dir = path.join(tmp(), 'my keys');
    mkdirSync(dir);
    const ring = ringWithMode(dir, 0o666);
    expect(() => loadKeyRing(ring)).toThrow(`Fix: chmod go-w '${ring}'`);
  });

  const root = process.getuid?.() === 0;
  (root ? it : it.skip)(
    'refuses a ring and a signing key owned by another user, with the chown fix (runs as root only: it needs chown)',
    () => {
      const dir = tmp();
      const ring = ringWithMode(dir, 0o644);
      const key = keyWithMode(dir, 0o600);
      chownSync(ring, 4242, 4242);
      chownSync(key, 4242, 4242);
      expect(() => loadKeyRing(ring)).toThrow(
        `trusted key ring ${ring} is refused: it is owned by uid 4242, not by you (uid 0) or root, so its owner can change it. Fix: make it yours: chown 0 ${ring} (as root), or use a copy of your own`,
      );
      expect(() => loadSigningKey(key)).toThrow(/is owned by uid 4242.*chown 0/);
    },
  );
  if (!root)
    it.todo('the other-owner refusal on real files is checked only as root (chown needs it)');

  it("accepts root's files as this user's own, and refuses any other owner's (the rule, for any uid)", () => {
    const st = (uid: number, mode: number) => ({ uid, mode: 0o100000 | mode, isFile: () => true });
    expect(keyFileProblem(st(0, 0o644), 1000, 'trusted key ring', 'r')).toBeNull();
    expect(keyFileProblem(st(1000, 0o644), 1000, 'trusted key ring', 'r')).toBeNull();
    expect(keyFileProblem(st(1001, 0o644), 1000, 'trusted key ring', 'r')?.what).toMatch(
      /owned by uid 1001, not by you \(uid 1000\) or root/,
    );
    // As root, a file of any other user is refused.
    expect(keyFileProblem(st(1000, 0o600), 0, 'signing key', 'k')?.fix).toBe(
      'make it yours: chown 0 k (as root), or use a copy of your own',
    );
  });
});
