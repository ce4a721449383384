/**
 * What the fuzz runner and its worker share: counters (records done, cases done, the running
 * record's index and start time) and the running case's bytes, in shared memory so the runner
 * reads them without the worker's help (it may be stuck in a record), and their messages.
 */
import type { Finding, FuzzCase } from './pipeline';

/** Room for one case's records: cases of the generator stay well below it. */
export const CASE_BYTES = 64 * 1024 * 1024;

export interface WorkerData {
  seconds: number;
  seed: number;
  counters: SharedArrayBuffer;
  bytes: SharedArrayBuffer;
}

export interface Shared {
  /** [records done, cases done, running record index, its start (epoch ms) or 0] */
  counters: Float64Array;
  bytes: Uint8Array;
}

export function newShared(): { counters: SharedArrayBuffer; bytes: SharedArrayBuffer } {
  return { counters: new SharedArrayBuffer(4 * 8), bytes: new SharedArrayBuffer(CASE_BYTES) };
}

export interface Tally {
  deadLetters: Record<string, number>;
  audits: Record<string, number>;
  verdicts: Record<string, number>;
  outputs: number;
  largestBytes: number;
}

export type WorkerMessage =
  | { kind: 'corpus-failed'; name: string; error: Finding | string }
  | { kind: 'corpus-passed' }
  | { kind: 'flaky'; seed: number; error: Finding }
  | {
      kind: 'found';
      seed: number;
      path: string;
      error: Finding | string;
      replayed: 'passed' | 'failed again';
      found: FuzzCase;
    }
  | { kind: 'done'; tally: Tally };

/**
 * The case as [ring: u8][records: u32] then per record [key length: i32, -1 for null][key]
 * [value length: i32][value]; a case too large for the buffer is written as 0xff alone.
 */
export function writeCase(shared: Shared, c: FuzzCase): void {
  const b = Buffer.from(shared.bytes.buffer, shared.bytes.byteOffset, shared.bytes.byteLength);
  let size = 5;
  for (const r of c.records) size += 8 + (r.key?.length ?? 0) + (r.value?.length ?? 0);
  if (size > b.length) {
    b[0] = 0xff;
    return;
  }
  b[0] = c.ring ? 1 : 0;
  b.writeUInt32LE(c.records.length, 1);
  let at = 5;
  for (const r of c.records) {
    for (const part of [r.key, r.value]) {
      b.writeInt32LE(part === null ? -1 : part.length, at);
      at += 4;
      if (part !== null) at += part.copy(b, at);
    }
  }
}

/** The case the worker was running, or null if it did not fit. */
export function readCase(shared: Shared): FuzzCase | null {
  const b = Buffer.from(shared.bytes.buffer, shared.bytes.byteOffset, shared.bytes.byteLength);
  if (b[0] === 0xff) return null;
  const n = b.readUInt32LE(1);
  let at = 5;
  const part = (): Buffer | null => {
    const len = b.readInt32LE(at);
    at += 4;
    if (len < 0) return null;
    const out = Buffer.from(b.subarray(at, at + len));
    at += len;
    return out;
  };
  const records = Array.from({ length: n }, () => {
    const key = part();
    return { key, value: part() };
  });
  return { ring: b[0] === 1, records };
}
