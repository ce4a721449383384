/** FileSpillStore: lossless, atomic, and a read verifies the handle's sha256. */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSpillStore, SpillIntegrityError } from '../../src/client';

describe('FileSpillStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spill = (content: Uint8Array, sessionId = 's/1 ü') => ({
    sessionId,
    spillRequestId: `${sessionId}:r:7`,
    unit: 'TURNS' as const,
    range: { start: 0, end: 3 },
    content,
  });

  it('reads back the exact bytes written (binary, not only text), under a file:// handle with their sha256', async () => {
    const store = new FileSpillStore(dir);
    const bytes = Buffer.from([0, 255, 10, 13, 0xe2, 0x9c, 0x93, 0]);
    const handle = await store.write(spill(bytes));
    expect(handle).toMatch(/^file:\/\/\/.*\.spill#sha256=[0-9a-f]{64}$/);
    expect((await store.read(handle)).equals(bytes)).toBe(true);
    // No temp file is left next to it, and ids with '/' stay inside the store's directory.
    const file = fileURLToPath(handle.split('#')[0]!);
    expect(file.startsWith(dir)).toBe(true);
    expect(readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });

  it('refuses content that no longer matches its handle, and handles that are not file URIs with a sha256', async () => {
    const store = new FileSpillStore(dir);
    const handle = await store.write(spill(Buffer.from('the constraint')));
    writeFileSync(fileURLToPath(handle.split('#')[0]!), 'the constraint, edited');
    await expect(store.read(handle)).rejects.toThrow(/does not match the handle/);
    await expect(store.read(handle.split('#')[0]!)).rejects.toThrow(SpillIntegrityError);
    await expect(store.read('s3://bucket/x#sha256=' + '0'.repeat(64))).rejects.toThrow(/file:\/\//);
    await expect(
      store.read(`file://${dir}/missing.spill#sha256=${'0'.repeat(64)}`),
    ).rejects.toThrow(/ENOENT/);
  });
});
