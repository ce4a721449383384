/**
 * FileSpillStore: lossless, atomic, private (0700 / 0600), names no id can steer, and a read
 * that verifies the handle's sha256, stays inside the store's root and is capped in size.
 */
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { FileSpillStore, SpillIntegrityError } from '../../src/client';

const sha = (b: string | Uint8Array) => createHash('sha256').update(b).digest('hex');
const fileOfHandle = (handle: string) => fileURLToPath(handle.split('#')[0]!);

/** The escaping of stores before hashed names: `%` + the UTF-16 code unit in hex. */
const oldEscape = (s: string) =>
  s.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** Ids an attacker who names a session or a request might choose. */
const HOSTILE_IDS = [
  '..',
  '.',
  '../../../../tmp/escaped',
  '/',
  '/etc/passwd',
  'a/b',
  'a\\b',
  'nul\u0000byte',
  'x'.repeat(10_000),
  'ü'.repeat(300),
  '会话🙂',
  '\u0101', // old escaping: %101 ...
  '\u00101', // ... the same name
  '',
  ' ',
  '.spill',
];

describe('FileSpillStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spill = (
    content: Uint8Array,
    sessionId = 's/1 ü',
    spillRequestId = `${sessionId}:r:7`,
  ) => ({
    sessionId,
    spillRequestId,
    unit: 'TURNS' as const,
    range: { start: 0, end: 3 },
    content,
  });

  it('reads back the exact bytes written (binary, not only text), under a file:// handle with their sha256', async () => {
    const store = new FileSpillStore(dir);
    const bytes = Buffer.from([0, 255, 10, 13, 0xe2, 0x9c, 0x93, 0]);
    const handle = await store.write(spill(bytes));
    expect(handle).toBe(
      `${pathToFileURL(store.fileOf('s/1 ü', 's/1 ü:r:7')).href}#sha256=${sha(bytes)}`,
    );
    expect((await store.read(handle)).equals(bytes)).toBe(true);
    // No temp file is left next to it.
    const file = fileOfHandle(handle);
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it('names files <root>/<sha256(sessionId)>/<sha256(spillRequestId)>.spill', async () => {
    const store = new FileSpillStore(dir);
    const handle = await store.write(spill(Buffer.from('t'), 'session-1', 'request-1'));
    expect(fileOfHandle(handle)).toBe(
      path.join(dir, sha('session-1'), `${sha('request-1')}.spill`),
    );
  });

  it('creates its directories 0700 and its files 0600, whatever the umask allows', async () => {
    const root = path.join(dir, 'new', 'spills');
    const old = process.umask(0o000);
    try {
      const handle = await new FileSpillStore(root).write(spill(Buffer.from('secret turns')));
      const file = fileOfHandle(handle);
      for (const d of [path.join(dir, 'new'), root, path.dirname(file)])
        expect([d, statSync(d).mode & 0o777]).toEqual([d, 0o700]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });

  it('keeps every hostile id inside the root, under its own name, and reads each back', async () => {
    const store = new FileSpillStore(path.join(dir, 'root'));
    // Two ids the old escaping mapped to one file name.
    expect(oldEscape('\u0101')).toBe(oldEscape('\u00101'));
    const files = new Set<string>();
    for (const [i, id] of HOSTILE_IDS.entries()) {
      const content = Buffer.from(`spill ${i}`);
      const handle = await store.write(spill(content, id, id));
      const rel = path.relative(store.dir, fileOfHandle(handle)).split(path.sep);
      expect([id.slice(0, 20), rel]).toEqual([id.slice(0, 20), [sha(id), `${sha(id)}.spill`]]);
      files.add(fileOfHandle(handle));
      expect((await store.read(handle)).toString()).toBe(`spill ${i}`);
    }
    expect(files.size).toBe(HOSTILE_IDS.length);
    // Nothing was written outside the root.
    expect(readdirSync(dir)).toEqual(['root']);
  });

  it('property: distinct (session, request) pairs get distinct files inside the root, each read back', async () => {
    const root = dir;
    const store = new FileSpillStore(root);
    const id = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...HOSTILE_IDS));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(id, id), {
          minLength: 1,
          maxLength: 6,
          selector: (p) => p.join('\u0000\u0001'),
        }),
        async (pairs) => {
          const seen = new Map<string, number>();
          for (const [i, [s, r]] of pairs.entries()) {
            const handle = await store.write(spill(Buffer.from(`${i}`), s, r));
            const file = fileOfHandle(handle);
            expect(path.relative(store.dir, file).split(path.sep)).toHaveLength(2);
            expect(file.startsWith(store.dir + path.sep)).toBe(true);
            expect(seen.has(file)).toBe(false);
            seen.set(file, i);
          }
          for (const [file, i] of seen) expect(readFileSync(file, 'utf8')).toBe(`${i}`);
          rmSync(root, { recursive: true, force: true });
        },
      ),
      { numRuns: 50 },
    );
  }, 60_000);

  it("refuses content that no longer matches its handle, without showing the content's hash", async () => {
    const store = new FileSpillStore(dir);
    const handle = await store.write(spill(Buffer.from('the constraint')));
    writeFileSync(fileOfHandle(handle), 'the constraint, edited');
    const error = await store.read(handle).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(SpillIntegrityError);
    expect(error!.message).toMatch(/does not match the handle's sha256/);
    expect(error!.message).not.toContain(sha('the constraint, edited'));
  });

  it('refuses handles that are not file URIs with a sha256 fragment', async () => {
    const store = new FileSpillStore(dir);
    const handle = await store.write(spill(Buffer.from('x')));
    await expect(store.read(handle.split('#')[0]!)).rejects.toThrow(/#sha256=<64 hex digits>/);
    await expect(store.read('s3://bucket/x#sha256=' + '0'.repeat(64))).rejects.toThrow(/file:\/\//);
    await expect(store.read('not a uri')).rejects.toThrow(/not a URI/);
    await expect(
      store.read(`${handle.split('#')[0]}?x=1#sha256=${'0'.repeat(64)}`),
    ).rejects.toThrow(/not a local file path/);
    await expect(
      store.read(`file://${dir}/${sha('s')}/missing.spill#sha256=${'0'.repeat(64)}`),
    ).rejects.toThrow(/ENOENT/);
  });

  it('reads nothing outside its root, and tells nothing about the file a hostile handle names', async () => {
    const store = new FileSpillStore(path.join(dir, 'root'));
    const outside = path.join(dir, 'private.txt');
    writeFileSync(outside, 'PRIVATE CONTENT');
    const other = new FileSpillStore(path.join(dir, 'other'));
    const othersHandle = (await other.write(spill(Buffer.from('other store')))).replace(
      /#sha256=.*/,
      `#sha256=${'0'.repeat(64)}`,
    );
    const own = await store.write(spill(Buffer.from('own')));
    const hostile = [
      `${pathToFileURL(outside).href}#sha256=${'0'.repeat(64)}`,
      `file:///etc/passwd#sha256=${'0'.repeat(64)}`,
      `${pathToFileURL(store.dir).href}/../private.txt#sha256=${'0'.repeat(64)}`,
      `${pathToFileURL(store.dir).href}/%2e%2e/private.txt#sha256=${'0'.repeat(64)}`,
      othersHandle,
      // Inside the root, but not where a spill can be: the root itself, one level, three levels.
      `${pathToFileURL(store.dir).href}#sha256=${'0'.repeat(64)}`,
      `${pathToFileURL(path.join(store.dir, 'x.spill')).href}#sha256=${'0'.repeat(64)}`,
      `${pathToFileURL(path.join(store.dir, 'a', 'b', 'c.spill')).href}#sha256=${'0'.repeat(64)}`,
      `${pathToFileURL(path.join(path.dirname(fileOfHandle(own)), 'x.txt')).href}#sha256=${'0'.repeat(64)}`,
      `file://remote-host${fileOfHandle(own)}#sha256=${sha('own')}`,
    ];
    for (const h of hostile) {
      const error = await store.read(h).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect([h, error instanceof SpillIntegrityError]).toEqual([h, true]);
      for (const secret of [
        'PRIVATE CONTENT',
        sha('PRIVATE CONTENT'),
        'other store',
        sha('other store'),
      ])
        expect(error!.message).not.toContain(secret);
    }
    expect((await store.read(own)).toString()).toBe('own');
  });

  it('follows no symbolic link out of the root', async () => {
    const store = new FileSpillStore(path.join(dir, 'root'));
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'f.spill'), 'outside');
    const sessionDir = path.join(store.dir, 'linked');
    mkdirSync(store.dir, { recursive: true });
    symlinkSync(outside, sessionDir);
    const viaDir = `${pathToFileURL(path.join(sessionDir, 'f.spill')).href}#sha256=${sha('outside')}`;
    await expect(store.read(viaDir)).rejects.toThrow(/symbolic link/);
    const realDir = path.join(store.dir, 'real');
    mkdirSync(realDir);
    symlinkSync(path.join(outside, 'f.spill'), path.join(realDir, 'g.spill'));
    const viaFile = `${pathToFileURL(path.join(realDir, 'g.spill')).href}#sha256=${sha('outside')}`;
    await expect(store.read(viaFile)).rejects.toThrow(/symbolic link/);
    mkdirSync(path.join(realDir, 'd.spill'));
    await expect(
      store.read(`${pathToFileURL(path.join(realDir, 'd.spill')).href}#sha256=${sha('x')}`),
    ).rejects.toThrow(/not a regular file/);
  });

  it('reads at most maxReadBytes (default 256 MiB), refusing a bigger file before reading it', async () => {
    expect(new FileSpillStore(dir).maxReadBytes).toBe(256 * 1024 * 1024);
    const store = new FileSpillStore(dir, { maxReadBytes: 10 });
    const fits = await store.write(spill(Buffer.from('0123456789'), 's', 'fits'));
    expect((await store.read(fits)).toString()).toBe('0123456789');
    const big = await store.write(spill(Buffer.from('0123456789A'), 's', 'big'));
    await expect(store.read(big)).rejects.toThrow(
      /11 bytes, more than this store reads \(maxReadBytes 10\)/,
    );
    expect(() => new FileSpillStore(dir, { maxReadBytes: -1 })).toThrow(RangeError);
  });

  it('quotes at most 200 characters of a hostile handle in its errors', async () => {
    const store = new FileSpillStore(dir);
    const long = `s3://${'x'.repeat(100_000)}`;
    const error = await store.read(long).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error!.message.length).toBeLessThan(400);
  });
});
