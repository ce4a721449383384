/**
 * The client's layers, read from its imports: src/client imports nothing of src/integrations
 * (they build on it, not the other way), and no two of its files import each other, even
 * through others: a session reaches its client only through the port it is given
 * (src/client/session/port.ts), never client.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');
const CLIENT = path.join(SRC, 'client');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? filesUnder(path.join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [path.join(dir, e.name)]
        : [],
  );
}

/** The src files `file` imports (relative imports, type-only ones included). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.[^']+)'/g)].flatMap((m) => {
    const base = path.resolve(path.dirname(file), m[1]!);
    const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => {
      try {
        readFileSync(f);
        return true;
      } catch {
        return false;
      }
    });
    return found ? [found] : [];
  });
}

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
    for (const g of importsOf(f)) if (inSet.has(g)) visit(g);
    stack.pop();
    done.add(f);
  };
  for (const f of files) visit(f);
  return found;
}

const clientFiles = filesUnder(CLIENT);

it('no file of src/client imports src/integrations', () => {
  expect(clientFiles.length).toBeGreaterThan(10);
  const offenders = clientFiles.filter((f) =>
    importsOf(f).some((g) => g.startsWith(path.join(SRC, 'integrations') + path.sep)),
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
