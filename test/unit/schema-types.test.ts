/**
 * The engine's hand-written types cannot drift from the Avro schemas: src/schema/generated.ts
 * must be what scripts/gen-types.mjs generates from schemas/*.avsc now, and src/schema/typeCheck.ts
 * (identity of every generated type with its engine twin) must type-check. ts-jest here only
 * transpiles, so the type check runs through the TypeScript compiler API.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const GENERATED = path.join(ROOT, 'src/schema/generated.ts');
const TYPE_CHECK = path.join(ROOT, 'src/schema/typeCheck.ts');

/** Type errors of typeCheck.ts under the project's options; `override` replaces a file's text. */
function typeCheckErrors(override?: { file: string; text: string }): string[] {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const readFile = host.readFile.bind(host);
  host.readFile = (file) =>
    override && path.resolve(file) === override.file ? override.text : readFile(file);
  const program = ts.createProgram([TYPE_CHECK], { ...options, noEmit: true }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('generated types', () => {
  it('src/schema/generated.ts is up to date with schemas/*.avsc (run node scripts/gen-types.mjs)', () => {
    const fresh = execFileSync(
      process.execPath,
      [path.join(ROOT, 'scripts/gen-types.mjs'), '--stdout'],
      {
        encoding: 'utf8',
      },
    );
    expect(fs.readFileSync(GENERATED, 'utf8')).toBe(fresh);
  });

  it('are identical to the engine types in events.ts and outputs.ts', () => {
    expect(typeCheckErrors()).toEqual([]);
  }, 30_000);

  it('would fail to type-check if a schema field changed nullability', () => {
    const generated = fs.readFileSync(GENERATED, 'utf8');
    const drifted = generated.replace(
      /(export interface SpillRequest \{[^}]*requestedAt: )number;/,
      '$1number | null;',
    );
    expect(drifted).not.toBe(generated);
    expect(typeCheckErrors({ file: GENERATED, text: drifted }).length).toBeGreaterThan(0);
  }, 30_000);

  it('would fail to type-check if an enum gained a symbol', () => {
    const generated = fs.readFileSync(GENERATED, 'utf8');
    const drifted = generated.replace(
      "'TURNS' | 'TOKENS' | 'MESSAGES'",
      "'TURNS' | 'TOKENS' | 'MESSAGES' | 'LINES'",
    );
    expect(drifted).not.toBe(generated);
    expect(typeCheckErrors({ file: GENERATED, text: drifted }).length).toBeGreaterThan(0);
  }, 30_000);
});
