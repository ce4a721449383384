/** Reading src/'s structure from its text: its files and what each imports (layer tests). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** Every .ts file below `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(path.join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [path.join(dir, e.name)]
        : [],
  );
}

/** The files `file` imports by a relative path (`./x` as x.ts or x/index.ts), type-only too. */
export function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.[^']+)'/g)].flatMap((m) => {
    const base = path.resolve(path.dirname(file), m[1]!);
    const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => existsSync(f));
    return found ? [found] : [];
  });
}

/** Every import cycle among `files`, each as the files on it relative to `root` (depth-first, one per back edge). */
export function importCycles(files: readonly string[], root: string): string[][] {
  const inSet = new Set(files);
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    if (done.has(f)) return;
    const at = stack.indexOf(f);
    if (at >= 0) {
      found.push(stack.slice(at).map((x) => path.relative(root, x)));
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

/** What `file` imports (or re-exports) by name from a relative path: the file and the names. */
export function namedImports(file: string): { from: string; names: string[] }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(\.[^']+)'/g)]
    .map((m) => {
      const base = path.resolve(path.dirname(file), m[2]!);
      const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => existsSync(f));
      const names = m[1]!
        .split(',')
        .map(
          (n) =>
            n
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        )
        .filter((n) => n.length > 0);
      return { from: found ?? '', names };
    })
    .filter((i) => i.from !== '');
}
