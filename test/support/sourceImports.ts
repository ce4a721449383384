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
