/**
 * `compaction-guard/client` must work without the optional peers langchain / @langchain/core:
 * nothing it loads may import them (only src/integrations/langchain does).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');

/** Every src file reachable from `entry` through relative imports. */
function reachable(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const text = readFileSync(entry, 'utf8');
  for (const m of text.matchAll(/from '(\.[^']+)'/g)) {
    const base = path.resolve(path.dirname(entry), m[1]!);
    const file = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => {
      try {
        readFileSync(f);
        return true;
      } catch {
        return false;
      }
    });
    if (file) reachable(file, seen);
  }
  return seen;
}

it('nothing the client entry point loads imports langchain or @langchain/*', () => {
  const files = [...reachable(path.join(SRC, 'client/index.ts'))];
  expect(files.length).toBeGreaterThan(5);
  const offenders = files.filter((f) =>
    /from '(langchain|@langchain\/)/.test(readFileSync(f, 'utf8')),
  );
  expect(offenders).toEqual([]);
  // The check sees the integration's imports when pointed at it.
  const lc = [...reachable(path.join(SRC, 'integrations/langchain/index.ts'))];
  expect(lc.some((f) => /from 'langchain'/.test(readFileSync(f, 'utf8')))).toBe(true);
});
