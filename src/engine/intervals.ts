/**
 * Sets of half-open integer ranges `[start, end)` (contract §2), as a flat sorted array
 * `[s0, e0, s1, e1, ...]`: ranges are non-empty, disjoint and non-adjacent (merged), so two
 * equal sets have equal arrays. Values are immutable: every operation returns a new set (or
 * one of its inputs when nothing changes). A flat array keeps state memory O(ranges).
 */
export type IntervalSet = readonly number[];

export const EMPTY: IntervalSet = Object.freeze([]) as IntervalSet;

export function range(start: number, end: number): IntervalSet {
  return end > start ? [start, end] : EMPTY;
}

export function isEmpty(a: IntervalSet): boolean {
  return a.length === 0;
}

/** Number of positions in the set. */
export function size(a: IntervalSet): number {
  let n = 0;
  for (let i = 0; i < a.length; i += 2) n += a[i + 1]! - a[i]!;
  return n;
}

/** Appends `[s, e)` to a result being built in ascending order, merging with its last range. */
function push(out: number[], s: number, e: number): void {
  if (e <= s) return;
  const n = out.length;
  if (n > 0 && out[n - 1]! >= s) {
    if (e > out[n - 1]!) out[n - 1] = e;
  } else {
    out.push(s, e);
  }
}

export function union(a: IntervalSet, b: IntervalSet): IntervalSet {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! <= b[j]!)) {
      push(out, a[i]!, a[i + 1]!);
      i += 2;
    } else {
      push(out, b[j]!, b[j + 1]!);
      j += 2;
    }
  }
  return out;
}

export function intersect(a: IntervalSet, b: IntervalSet): IntervalSet {
  if (a.length === 0 || b.length === 0) return EMPTY;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i]!, b[j]!);
    const e = Math.min(a[i + 1]!, b[j + 1]!);
    if (s < e) out.push(s, e);
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return out.length === 0 ? EMPTY : out;
}

/** `a − b`. */
export function subtract(a: IntervalSet, b: IntervalSet): IntervalSet {
  if (a.length === 0 || b.length === 0) return a;
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let s = a[i]!;
    const e = a[i + 1]!;
    while (j < b.length && b[j + 1]! <= s) j += 2;
    let k = j;
    while (k < b.length && b[k]! < e) {
      if (b[k]! > s) out.push(s, b[k]!);
      s = Math.max(s, b[k + 1]!);
      if (s >= e) break;
      k += 2;
    }
    if (s < e) out.push(s, e);
  }
  return out.length === 0 ? EMPTY : out;
}

/** `a ∩ [start, end)`. */
export function clip(a: IntervalSet, start: number, end: number): IntervalSet {
  if (a.length === 0) return a;
  if (a[0]! >= start && a[a.length - 1]! <= end) return a;
  return intersect(a, range(start, end));
}

/** `a ⊆ b`. */
export function isSubset(a: IntervalSet, b: IntervalSet): boolean {
  return subtract(a, b).length === 0;
}

/** `a ∩ b ≠ ∅`. */
export function meets(a: IntervalSet, b: IntervalSet): boolean {
  return intersect(a, b).length > 0;
}

export function equals(a: IntervalSet, b: IntervalSet): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function contains(a: IntervalSet, position: number): boolean {
  for (let i = 0; i < a.length; i += 2) {
    if (position < a[i]!) return false;
    if (position < a[i + 1]!) return true;
  }
  return false;
}

/** The ranges of the set as `{start, end}` pairs, ascending. */
export function toSpans(a: IntervalSet): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (let i = 0; i < a.length; i += 2) out.push({ start: a[i]!, end: a[i + 1]! });
  return out;
}

/** Builds a set from arbitrary (possibly overlapping, unsorted, empty) ranges. */
export function fromSpans(spans: readonly { start: number; end: number }[]): IntervalSet {
  let out: IntervalSet = EMPTY;
  for (const s of spans) out = union(out, range(s.start, s.end));
  return out;
}

/** At most this many ranges in any list an output carries (contract §6). */
export const MAX_REPORTED_RANGES = 16;

/**
 * The set as an output reports it (contract §6, reported lists are bounded): at most 16 ranges,
 * a longer set as its first 15 ranges and one range from the start of its 16th to the end of its
 * last. Every position is still named; some positions between are named too.
 */
export function reported(a: IntervalSet): IntervalSet {
  const keep = 2 * (MAX_REPORTED_RANGES - 1);
  if (a.length <= 2 * MAX_REPORTED_RANGES) return a;
  return [...a.slice(0, keep), a[keep]!, a[a.length - 1]!];
}

/** The ranges an output lists for a set: `reported(a)` as `{start, end}` pairs. */
export function reportedSpans(a: IntervalSet): { start: number; end: number }[] {
  return toSpans(reported(a));
}

/** Readable form for messages, of the set as reported: `[0,8) ∪ [12,14)`. */
export function format(a: IntervalSet): string {
  const r = reported(a);
  if (r.length === 0) return '∅';
  const parts: string[] = [];
  for (let i = 0; i < r.length; i += 2) parts.push(`[${r[i]},${r[i + 1]})`);
  return parts.join(' ∪ ');
}
