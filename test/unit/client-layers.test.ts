/**
 * The client's layers, read from its imports: src/client imports nothing of src/integrations
 * (they build on it, not the other way), and no two of its files import each other, even
 * through others: a session reaches its client only through the port it is given
 * (src/client/session/port.ts), never client.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { relativeImports, sourceFiles } from '../support/sourceImports';

const SRC = path.resolve(__dirname, '../../src');
const CLIENT = path.join(SRC, 'client');

/** Every import cycle among `files`, each as the files on it (depth-first, one per back edge). */
function cycles(files: readonly string[]): string[][] {
  const inSet = new Set(files);
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    if (done.has(f)) return;
    const at = stack.indexOf(f);
    if (at >= 0) {
      found.push(stack.slice(at).map((x) => path.relative(SRC, x)));
      return;
    }
    stack.push(f);
    for (const g of relativeImports(f)) if (inSet.has(g)) visit(g);
    stack.pop();
    done.add(f);
  };
  for (const f of files) visit(f);
  return found;
}

const clientFiles = sourceFiles(CLIENT);

it('no file of src/client imports src/integrations', () => {
  expect(clientFiles.length).toBeGreaterThan(10);
  const offenders = clientFiles.filter((f) =>
    relativeImports(f).some((g) => g.startsWith(path.join(SRC, 'integrations') + path.sep)),
  );
  expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
});

it('the files of src/client import each other without a cycle', () => {
  expect(cycles(clientFiles)).toEqual([]);
});

it('the cycle check sees a cycle when two files import each other through a third', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-cycle-'));
  try {
    writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
    writeFileSync(path.join(dir, 'b.ts'), "import type { C } from './c';\nexport const b = 1;\n");
    writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a';\nexport type C = typeof a;\n");
    const files = ['a', 'b', 'c'].map((f) => path.join(dir, `${f}.ts`));
    expect(cycles(files)).toHaveLength(1);
    expect(cycles(files)[0]).toHaveLength(3);
    expect(cycles(files.slice(0, 2))).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
