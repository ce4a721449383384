/**
 * The fuzz corpus: one JSON file per case in test/fuzz/corpus/, the poison records and
 * whatever the fuzzer found. Bytes are written so that a person can read them and a 600 KB
 * record stays a few lines: `null`, a UTF-8 string, `{"base64": "..."}`, or
 * `{"parts": [...]}` of those with `{"repeat": n, "of": <bytes>}` for long runs.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FuzzCase, FuzzRecord } from './pipeline';

export const CORPUS_DIR = path.join(__dirname, 'corpus');

export type BytesSpec =
  null | string | { base64: string } | { repeat: number; of: BytesSpec } | { parts: BytesSpec[] };

/** What a corpus record must do beyond passing the target (checked by the corpus test). */
export interface Expectation {
  /** The dead letter's code, or null: the record decodes. */
  deadLetter?: string | null;
  /** The verdicts' decisions, in order, if it must be answered. */
  verdicts?: string[];
}

export interface CorpusRecord {
  key: BytesSpec;
  value: BytesSpec;
  expect?: Expectation;
}

export interface CorpusFile {
  /** What the case is and why it is kept. */
  about: string;
  ring: boolean;
  records: CorpusRecord[];
}

export function bytesOf(spec: BytesSpec): Buffer | null {
  if (spec === null) return null;
  if (typeof spec === 'string') return Buffer.from(spec, 'utf8');
  if ('base64' in spec) return Buffer.from(spec.base64, 'base64');
  if ('repeat' in spec) {
    const one = bytesOf(spec.of) ?? Buffer.alloc(0);
    return Buffer.concat(Array.from({ length: spec.repeat }, () => one));
  }
  return Buffer.concat(spec.parts.map((p) => bytesOf(p) ?? Buffer.alloc(0)));
}

/** Bytes as a spec: text when they are UTF-8 that reads back the same, runs folded. */
export function specOf(b: Buffer | null): BytesSpec {
  if (b === null) return null;
  const text = b.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(b)) return { base64: b.toString('base64') };
  return foldRuns(text);
}

/** Runs of one character over 64 long become `{"repeat": n, "of": c}`. */
function foldRuns(text: string): BytesSpec {
  const parts: BytesSpec[] = [];
  const runs = /(.)\1{63,}/gsu;
  let last = 0;
  for (const m of text.matchAll(runs)) {
    const at = m.index ?? 0;
    if (at > last) parts.push(text.slice(last, at));
    parts.push({ repeat: [...m[0]].length, of: m[1]! });
    last = at + m[0].length;
  }
  if (last === 0) return text;
  if (last < text.length) parts.push(text.slice(last));
  return { parts };
}

export function caseOf(file: CorpusFile): FuzzCase {
  return {
    ring: file.ring,
    records: file.records.map((r): FuzzRecord => ({
      key: bytesOf(r.key),
      value: bytesOf(r.value),
    })),
  };
}

export function fileOf(c: FuzzCase, about: string): CorpusFile {
  return {
    about,
    ring: c.ring,
    records: c.records.map((r) => ({ key: specOf(r.key), value: specOf(r.value) })),
  };
}

export function readCorpus(dir = CORPUS_DIR): { name: string; file: CorpusFile }[] {
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((name) => ({
      name,
      file: JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CorpusFile,
    }));
}

/** Writes a found case; its name is its content's hash, so the same finding is kept once. */
export function writeFinding(c: FuzzCase, about: string, dir = CORPUS_DIR): string {
  const file = fileOf(c, about);
  const text = `${JSON.stringify(file, null, 2)}\n`;
  const name = `found-${createHash('sha256').update(JSON.stringify(file.records)).digest('hex').slice(0, 12)}.json`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}
