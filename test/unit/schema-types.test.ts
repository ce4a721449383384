/**
 * One source for the contract's types: src/engine/contract.ts is what scripts/gen-types.mjs
 * generates from schemas/*.avsc now, the engine re-exports it, and a schema change the code
 * does not follow fails the type check of src/ (ts-jest only transpiles, so the check runs
 * through the TypeScript compiler API, with contract.ts regenerated from changed schemas).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { SIGNABLE_EVENT_TYPES } from '../../src/engine/authority';
import { EVENT_TYPES } from '../../src/engine/events';
import { AUDIT_CODE_SYMBOLS, AUDIT_KIND_OF, RULE_CODE_SYMBOLS } from '../../src/engine/outputs';
import { RULE_CODES } from '../../src/engine/rules';

const ROOT = path.resolve(__dirname, '../..');
const CONTRACT = path.join(ROOT, 'src/engine/contract.ts');
const GENERATOR = path.join(ROOT, 'scripts/gen-types.mjs');

function generated(schemaDir?: string): string {
  const args = [GENERATOR, '--stdout', ...(schemaDir ? ['--schema-dir', schemaDir] : [])];
  return execFileSync(process.execPath, args, { encoding: 'utf8' });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? sourceFiles(path.join(dir, d.name))
      : d.name.endsWith('.ts')
        ? [path.join(dir, d.name)]
        : [],
  );
}

/** Type errors of src/ under the project's options, with contract.ts replaced by `contract`. */
function typeErrors(contract: string): string[] {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (path.resolve(file) === CONTRACT ? contract : readFile(file));
  const program = ts.createProgram(
    sourceFiles(path.join(ROOT, 'src')),
    { ...options, noEmit: true },
    host,
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? path.relative(ROOT, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

/** contract.ts generated from the schemas with `edit` applied to every file's text. */
function contractWith(edit: (text: string) => string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-schemas-'));
  cpSync(path.join(ROOT, 'schemas'), dir, { recursive: true });
  let changed = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.avsc'))) {
    const original = readFileSync(path.join(dir, file), 'utf8');
    const text = edit(original);
    if (text !== original) changed++;
    writeFileSync(path.join(dir, file), text);
  }
  expect(changed).toBeGreaterThan(0);
  return generated(dir);
}

describe('the contract types have one source, the schemas', () => {
  it('src/engine/contract.ts is up to date with schemas/*.avsc (run node scripts/gen-types.mjs)', () => {
    expect(readFileSync(CONTRACT, 'utf8')).toBe(generated());
  });

  it('src/ type-checks against the generated contract', () => {
    expect(typeErrors(readFileSync(CONTRACT, 'utf8'))).toEqual([]);
  }, 60_000);

  it('the engine lists are the schema symbols: event types, rule codes in table order, every audit code with a kind', () => {
    const union = JSON.parse(
      readFileSync(path.join(ROOT, 'schemas/context-change-event.avsc'), 'utf8'),
    ) as { name: string }[];
    expect(EVENT_TYPES).toEqual(union.map((r) => r.name));
    expect(RULE_CODES).toEqual(RULE_CODE_SYMBOLS);
    expect(Object.keys(AUDIT_KIND_OF).sort()).toEqual([...AUDIT_CODE_SYMBOLS].sort());
  });

  it('the signable event types are the event records with a signature field, and the only ones whose seq may be null', () => {
    type Field = { name: string; type: unknown };
    const union = JSON.parse(
      readFileSync(path.join(ROOT, 'schemas/context-change-event.avsc'), 'utf8'),
    ) as { name: string; fields: Field[] }[];
    const field = (r: { fields: Field[] }, name: string) => r.fields.find((f) => f.name === name);
    const withSignature = union.filter((r) => field(r, 'signature') !== undefined);
    const seqMayBeNull = union.filter((r) =>
      JSON.stringify(field(r, 'seq')!.type).includes('null'),
    );
    expect(SIGNABLE_EVENT_TYPES).toEqual(withSignature.map((r) => r.name));
    // The engine admits a null seq (step 0) as a signable event: the two sets must be one.
    expect(SIGNABLE_EVENT_TYPES).toEqual(seqMayBeNull.map((r) => r.name));
  });
});

describe('a schema change the code does not follow fails the type check', () => {
  it('a new unit', () => {
    const contract = contractWith((t) =>
      t.replace(
        '"symbols": ["TURNS", "TOKENS", "MESSAGES"]',
        '"symbols": ["TURNS", "TOKENS", "MESSAGES", "LINES"]',
      ),
    );
    expect(typeErrors(contract).length).toBeGreaterThan(0);
  }, 60_000);

  it('a new event type fails at every place that dispatches on an event type (here one that carries a signature)', () => {
    // A copy of SpillFailed under another name: a signable, out-of-band-capable type.
    const contract = contractWith((t) => {
      if (!t.trimStart().startsWith('[')) return t;
      const union = JSON.parse(t) as { name: string; doc: string }[];
      const copy = { ...union.find((r) => r.name === 'SpillFailed')!, name: 'SpillCancelled' };
      return JSON.stringify([...union, { ...copy, doc: 'new' }]);
    });
    // Errors unrelated to the new type are the business of "src/ type-checks" above.
    const unhandled = typeErrors(contract).filter((e) => e.includes('SpillCancelled'));
    expect([...new Set(unhandled.map((e) => e.slice(0, e.indexOf(':'))))].sort()).toEqual([
      'src/client/session/ledger.ts',
      'src/engine/authority.ts',
      'src/engine/authorize.ts',
      'src/engine/extent.ts',
      'src/engine/sequence.ts',
      'src/engine/step.ts',
    ]);
  }, 60_000);

  it('a new audit code (its kind is not given)', () => {
    const contract = contractWith((t) =>
      t.replace('"SPILL_INCOMPLETE"', '"SPILL_INCOMPLETE", "NEW_CODE"'),
    );
    expect(typeErrors(contract).join('\n')).toMatch(
      /src\/engine\/outputs.ts: Property 'NEW_CODE' is missing/,
    );
  }, 60_000);

  it('a new required verdict field', () => {
    // Only verdict.avsc starts with the Verdict record.
    const contract = contractWith((t) =>
      t.startsWith('{\n  "type": "record",\n  "name": "Verdict"')
        ? t.replace(
            '"fields": [',
            '"fields": [\n    { "name": "tenant", "type": "string", "doc": "new" },',
          )
        : t,
    );
    expect(typeErrors(contract).join('\n')).toMatch(
      /src\/engine\/decide.ts: .*'tenant' is missing/s,
    );
  }, 60_000);
});
