/**
 * Sets of positions for the reference model (test/support/referenceModel.ts), deliberately
 * naive: a boolean per position. Written from the contract text only: the bounded range sets of
 * §4a (coarsening) and the bounded reported lists of §6 are spelled out here position by
 * position, so they cross-check the engine's interval arithmetic.
 */

export type Bits = Uint8Array;
export type Run = [number, number];

/**
 * Positions 0..n−1, one cell each, and optionally one more cell standing for all of
 * `[n, top)`: an event may name 2^52 − 1 (a blind state's evidence head, an acknowledgement of
 * everything) while everything else it names stays small. A range must then start and end
 * either at most at n or exactly at `top`, which keeps every set exact; anything else throws
 * (the universe was sized wrong, not a finding).
 */
export class Universe {
  readonly cells: number;

  constructor(
    readonly n: number,
    readonly top: number | null = null,
  ) {
    this.cells = top === null ? n : n + 1;
  }

  empty(): Bits {
    return new Uint8Array(this.cells);
  }

  /** The cell index of a boundary position. */
  private cellOf(p: number): number {
    if (p <= this.n) return p;
    if (this.top !== null && p === this.top) return this.cells;
    throw new Error(`position ${p} is outside the model's universe (n=${this.n}, top=${this.top})`);
  }

  /** The position a cell boundary stands for. */
  private positionOf(c: number): number {
    return this.top !== null && c === this.cells ? this.top : c;
  }

  range(s: number, e: number): Bits {
    return this.fill(this.empty(), s, e);
  }

  /** Sets the cells of [s, e) in `x`. */
  private fill(x: Bits, s: number, e: number): Bits {
    if (e <= s) return x;
    const lo = this.cellOf(Math.max(0, s));
    const hi = this.cellOf(e);
    for (let i = lo; i < hi; i++) x[i] = 1;
    return x;
  }

  // Plain loops: TypedArray.map with a closure is an order of magnitude slower, and the
  // differential test runs these over 1,000-position universes thousands of times.
  or(a: Bits, b: Bits): Bits {
    const x = this.empty();
    for (let i = 0; i < x.length; i++) x[i] = a[i]! | b[i]!;
    return x;
  }
  and(a: Bits, b: Bits): Bits {
    const x = this.empty();
    for (let i = 0; i < x.length; i++) x[i] = a[i]! & b[i]!;
    return x;
  }
  minus(a: Bits, b: Bits): Bits {
    const x = this.empty();
    for (let i = 0; i < x.length; i++) x[i] = a[i]! & (1 - b[i]!);
    return x;
  }
  isEmpty(a: Bits): boolean {
    for (let i = 0; i < a.length; i++) if (a[i] === 1) return false;
    return true;
  }
  subset(a: Bits, b: Bits): boolean {
    return this.isEmpty(this.minus(a, b));
  }
  equal(a: Bits, b: Bits): boolean {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  /** The maximal runs of a set, as half-open position ranges, left to right. */
  runs(a: Bits): Run[] {
    const out: Run[] = [];
    let i = 0;
    while (i < a.length) {
      if (!a[i]) {
        i++;
        continue;
      }
      const s = i;
      while (i < a.length && a[i]) i++;
      out.push([this.positionOf(s), this.positionOf(i)]);
    }
    return out;
  }

  fromRuns(runs: readonly Run[]): Bits {
    const x = this.empty();
    for (const [s, e] of runs) this.fill(x, s, e);
    return x;
  }
}

/** Contract §4a: a state set holds at most this many ranges. */
export const MAX_SET_RANGES = 128;

/**
 * §4a for pins, T, X and K (more positions never approve more): while the set has more than
 * `limit` ranges, the two neighbouring ranges with the smallest gap between them, the leftmost
 * pair on a tie, become one range from the first's start to the second's end.
 */
export function coarsenByMerging(u: Universe, set: Bits, limit = MAX_SET_RANGES): Bits {
  let x = set;
  for (let runs = u.runs(x); runs.length > limit; runs = u.runs(x)) {
    let best = 1;
    for (let i = 2; i < runs.length; i++) {
      if (runs[i]![0] - runs[i - 1]![1] < runs[best]![0] - runs[best - 1]![1]) best = i;
    }
    x = u.or(x, u.range(runs[best - 1]![1], runs[best]![0]));
  }
  return x;
}

/**
 * §4a for S, P, A0 and A1 (fewer positions never approve more): while the set has more than
 * `limit` ranges, its shortest range, the leftmost on a tie, is removed.
 */
export function coarsenByRemoving(u: Universe, set: Bits, limit = MAX_SET_RANGES): Bits {
  let x = set;
  for (let runs = u.runs(x); runs.length > limit; runs = u.runs(x)) {
    let best = 0;
    for (let i = 1; i < runs.length; i++) {
      if (runs[i]![1] - runs[i]![0] < runs[best]![1] - runs[best]![0]) best = i;
    }
    x = u.minus(x, u.range(runs[best]![0], runs[best]![1]));
  }
  return x;
}

/** Contract §6: a reported list of ranges has at most this many items. */
export const MAX_REPORTED_RANGES = 16;

/**
 * §6: a longer list is reported as its first 15 ranges and one range from the start of its
 * 16th to the end of its last.
 */
export function reported(runs: readonly Run[]): Run[] {
  if (runs.length <= MAX_REPORTED_RANGES) return runs.map(([s, e]) => [s, e]);
  const head = runs.slice(0, MAX_REPORTED_RANGES - 1).map(([s, e]): Run => [s, e]);
  return [...head, [runs[MAX_REPORTED_RANGES - 1]![0], runs[runs.length - 1]![1]]];
}
