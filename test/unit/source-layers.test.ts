/**
 * The client's layers, read from its imports: src/client imports nothing of src/integrations
 * (they build on it, not the other way), and no two of its files import each other, even
 * through others: a session reaches its client only through the port it is given
 * (src/client/session/port.ts), never client.ts. And no file of src/ is on an import cycle:
 * a cycle is two concerns that cannot be read or changed apart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { importCycles, relativeImports, sourceFiles } from '../support/sourceImports';

const SRC = path.resolve(__dirname, '../../src');
const CLIENT = path.join(SRC, 'client');

const clientFiles = sourceFiles(CLIENT);

it('no file of src/client imports src/integrations', () => {
  expect(clientFiles.length).toBeGreaterThan(10);
  const offenders = clientFiles.filter((f) =>
    relativeImports(f).some((g) => g.startsWith(path.join(SRC, 'integrations') + path.sep)),
  );
  expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
});

it('the files of src/client import each other without a cycle', () => {
  expect(importCycles(clientFiles, SRC)).toEqual([]);
});

it('no two files anywhere in src/ import each other, even through others', () => {
  const all = sourceFiles(SRC);
  expect(all.length).toBeGreaterThan(150);
  expect(importCycles(all, SRC)).toEqual([]);
});

it('the cycle check sees a cycle when two files import each other through a third', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-cycle-'));
  try {
    writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
    writeFileSync(path.join(dir, 'b.ts'), "import type { C } from './c';\nexport const b = 1;\n");
    writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a';\nexport type C = typeof a;\n");
    const files = ['a', 'b', 'c'].map((f) => path.join(dir, `${f}.ts`));
    expect(importCycles(files, dir)).toHaveLength(1);
    expect(importCycles(files, dir)[0]).toHaveLength(3);
    expect(importCycles(files.slice(0, 2), dir)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
