/**
 * docs/contract.md is the project's own copy of the contract: nothing tracked may point outside
 * the repository for it, and its tables list exactly the closed code sets the code defines
 * (rule codes in evaluation order, audit codes with their kinds, dead-letter codes, event types).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { types } from 'avsc';
import { RULE_CODES } from '../../src/engine/rules';
import { EVENT_TYPES } from '../../src/engine/events';
import { DECODE_ERROR_CODES } from '../../src/schema/errors';
import { KAFKA_DEAD_LETTER_CODES } from '../../src/kafka/records';
import { auditRecordType, verdictType } from '../../src/schema/schemas';

const ROOT = path.resolve(__dirname, '../..');
const contract = readFileSync(path.join(ROOT, 'docs/contract.md'), 'utf8');

/** The text of `## N.` up to the next `## ` heading. */
function section(n: number): string {
  const start = contract.indexOf(`\n## ${n}. `);
  if (start < 0) throw new Error(`docs/contract.md has no section ## ${n}.`);
  const end = contract.indexOf('\n## ', start + 1);
  return contract.slice(start, end < 0 ? undefined : end);
}

/** Table rows of a text as their trimmed cells (separator rows left out). */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[-| ]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

const CODE = /^[A-Z][A-Z0-9_]+$/;

/** The symbols of an enum field of a record schema (the .avsc files are the one source). */
function enumSymbols(record: types.RecordType, field: string): string[] {
  const t = record.field(field)!.type as types.EnumType | types.ArrayType;
  return 'symbols' in t ? [...t.symbols] : [];
}

describe('docs/contract.md', () => {
  it('no tracked file mentions the folder outside the repository the contract came from', () => {
    // The folder itself, not a sibling module whose name begins with it (../sharedTransactions).
    const outside = new RegExp(`\\.\\./${'shared'}(?![\\w-])`);
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f !== '');
    expect(files).toContain('docs/contract.md');
    const mentioning = files.filter((f) =>
      outside.test(readFileSync(path.join(ROOT, f), 'latin1')),
    );
    expect(mentioning).toEqual([]);
  });

  it('has the sections §1–§8', () => {
    for (let n = 1; n <= 8; n++) expect(section(n).length).toBeGreaterThan(200);
  });

  it('§5 lists the rule codes in the order the engine evaluates them', () => {
    const table = rows(section(5))
      .map((r) => r[0]!)
      .filter((c) => CODE.test(c));
    expect(table).toEqual([...RULE_CODES]);
    // The verdict schema's RuleCode enum is the same closed set.
    const reasons = verdictType.field('reasons')!.type as types.ArrayType;
    expect(new Set(enumSymbols(reasons.itemsType as types.RecordType, 'code'))).toEqual(
      new Set(RULE_CODES),
    );
  });

  it('§6 lists every audit code of the audit-record schema, each once, as ADVISORY or VIOLATION', () => {
    const table = rows(section(6)).filter((r) => r[0] === 'ADVISORY' || r[0] === 'VIOLATION');
    const codes = table.map((r) => r[1]!);
    expect(codes.length).toBe(new Set(codes).size);
    expect(new Set(codes)).toEqual(new Set(enumSymbols(auditRecordType, 'code')));
    expect(new Set(table.map((r) => r[0]))).toEqual(new Set(enumSymbols(auditRecordType, 'kind')));
  });

  it('§6 lists every dead-letter code, each once', () => {
    const codes = rows(section(6))
      .map((r) => r[0]!)
      .filter((c) => CODE.test(c) && c !== 'ADVISORY' && c !== 'VIOLATION');
    expect(codes.length).toBe(new Set(codes).size);
    expect(new Set(codes)).toEqual(new Set([...DECODE_ERROR_CODES, ...KAFKA_DEAD_LETTER_CODES]));
  });

  it('§3 lists the event types, in the order of EVENT_TYPES', () => {
    const types = rows(section(3))
      .map((r) => r[0]!)
      .filter((c) => /^[A-Z][a-z][A-Za-z]*$/.test(c));
    expect(types).toEqual([...EVENT_TYPES]);
  });
});
