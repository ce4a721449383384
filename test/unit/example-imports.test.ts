/**
 * The runnable examples (examples/*.ts) are what a stranger copies: they import the package's
 * own paths (`compaction-guard/client`, `/ai-sdk`, `/langchain`), never `../src`, and they
 * type-check. At run time Node resolves those paths through package.json `exports` (the
 * package's self-reference: dist/, as in a user's project); for the type check,
 * examples/tsconfig.json maps them to src/ (the root tsconfig's `node` resolution reads no
 * `exports`), so this test, not `tsc -p tsconfig.json`, holds the examples' types.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const DIR = path.resolve(__dirname, '../../examples');
const EXAMPLES = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
const PACKAGE_PATHS = [
  'compaction-guard/client',
  'compaction-guard/ai-sdk',
  'compaction-guard/langchain',
];

jest.setTimeout(120_000);

describe('the examples', () => {
  it.each(EXAMPLES)('%s imports the package paths, not ../src', (file) => {
    const text = readFileSync(path.join(DIR, file), 'utf8');
    const local = [...text.matchAll(/from '(\.[^']*)'/g)].map((m) => m[1]);
    expect(local).toEqual([]);
    const own = [...text.matchAll(/from '(compaction-guard[^']*)'/g)].map((m) => m[1]);
    expect(own.length).toBeGreaterThan(0);
    for (const specifier of own) expect(PACKAGE_PATHS).toContain(specifier);
  });

  it('every package path they import is one package.json exports', () => {
    const pkg = JSON.parse(readFileSync(path.join(DIR, '../package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    for (const p of PACKAGE_PATHS)
      expect(Object.keys(pkg.exports)).toContain(p.replace('compaction-guard', '.'));
  });

  it('type-check under examples/tsconfig.json', () => {
    const configPath = path.join(DIR, 'tsconfig.json');
    const configFile = ts.readConfigFile(configPath, (f) => ts.sys.readFile(f));
    const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, DIR);
    const program = ts.createProgram(parsed.fileNames, { ...parsed.options, noEmit: true });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? path.relative(DIR, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(errors).toEqual([]);
    expect(parsed.fileNames.map((f) => path.basename(f)).sort()).toEqual([...EXAMPLES].sort());
  });
});
