/**
 * Interval sets (contract §2: half-open ranges `[start,end)`) against a brute-force model: a set
 * of integers in a small universe, kept as a boolean array. The model never calls the code
 * under test; inputs are built from the model.
 */
import fc from 'fast-check';
import {
  EMPTY,
  type IntervalSet,
  clip,
  contains,
  equals,
  format,
  fromSpans,
  intersect,
  isEmpty,
  isSubset,
  meets,
  range,
  size,
  subtract,
  toSpans,
  union,
} from '../../src/engine/intervals';

const N = 24;
type Bits = boolean[];

/** The model's canonical interval form of a bit set: maximal runs, ascending. */
function fromBits(bits: Bits): IntervalSet {
  const out: number[] = [];
  let i = 0;
  while (i < bits.length) {
    if (!bits[i]) {
      i++;
      continue;
    }
    const s = i;
    while (i < bits.length && bits[i]) i++;
    out.push(s, i);
  }
  return Object.freeze(out);
}

function toBits(a: IntervalSet, n = N): Bits {
  const bits = new Array<boolean>(n).fill(false);
  for (let i = 0; i < a.length; i += 2) for (let p = a[i]!; p < a[i + 1]!; p++) bits[p] = true;
  return bits;
}

function expectNormal(a: IntervalSet): void {
  expect(a.length % 2).toBe(0);
  for (let i = 0; i < a.length; i += 2) {
    expect(Number.isInteger(a[i])).toBe(true);
    expect(a[i]!).toBeLessThan(a[i + 1]!); // non-empty
    if (i + 2 < a.length) expect(a[i + 1]!).toBeLessThan(a[i + 2]!); // sorted, disjoint, non-adjacent
  }
}

const bitsArb = fc.array(fc.boolean(), { minLength: N, maxLength: N });
/** Sparse and dense sets both: runs of equal bits of random length. */
const runsArb = fc
  .array(fc.record({ on: fc.boolean(), len: fc.integer({ min: 1, max: 6 }) }), { maxLength: 10 })
  .map((runs) => {
    const bits: Bits = [];
    for (const r of runs) for (let k = 0; k < r.len && bits.length < N; k++) bits.push(r.on);
    while (bits.length < N) bits.push(false);
    return bits;
  });
const setBits = fc.oneof(bitsArb, runsArb);
const pos = fc.integer({ min: -3, max: N + 3 });
const RUNS = { numRuns: 300 };

describe('interval sets against a brute-force model', () => {
  it('union is the set union, in normal form, and leaves its inputs unchanged', () => {
    fc.assert(
      fc.property(setBits, setBits, (x, y) => {
        const a = fromBits(x);
        const b = fromBits(y);
        const r = union(a, b);
        expectNormal(r);
        expect(toBits(r)).toEqual(x.map((v, i) => v || y[i]!));
        expect(r).toEqual(fromBits(x.map((v, i) => v || y[i]!)));
      }),
      RUNS,
    );
  });

  it('intersect is the set intersection, in normal form', () => {
    fc.assert(
      fc.property(setBits, setBits, (x, y) => {
        const r = intersect(fromBits(x), fromBits(y));
        expectNormal(r);
        expect(r).toEqual(fromBits(x.map((v, i) => v && y[i]!)));
      }),
      RUNS,
    );
  });

  it('subtract is the set difference a − b, in normal form', () => {
    fc.assert(
      fc.property(setBits, setBits, (x, y) => {
        const r = subtract(fromBits(x), fromBits(y));
        expectNormal(r);
        expect(r).toEqual(fromBits(x.map((v, i) => v && !y[i])));
      }),
      RUNS,
    );
  });

  it('clip(a, s, e) is a ∩ [s,e), empty when e ≤ s, in normal form', () => {
    fc.assert(
      fc.property(setBits, pos, pos, (x, s, e) => {
        const r = clip(fromBits(x), s, e);
        expectNormal(r);
        expect(r).toEqual(fromBits(x.map((v, i) => v && i >= s && i < e)));
      }),
      RUNS,
    );
  });

  it('isSubset, meets, equals, contains and size agree with the model', () => {
    fc.assert(
      fc.property(setBits, setBits, fc.integer({ min: -2, max: N + 2 }), (x, y, p) => {
        const a = fromBits(x);
        const b = fromBits(y);
        expect(isSubset(a, b)).toBe(x.every((v, i) => !v || y[i]));
        expect(meets(a, b)).toBe(x.some((v, i) => v && y[i]));
        expect(equals(a, b)).toBe(x.every((v, i) => v === y[i]));
        expect(contains(a, p)).toBe(p >= 0 && p < N && x[p] === true);
        expect(size(a)).toBe(x.filter(Boolean).length);
        expect(isEmpty(a)).toBe(!x.some(Boolean));
      }),
      RUNS,
    );
  });

  it('fromSpans builds the normal form of any unsorted, overlapping, adjacent or empty spans', () => {
    const spanArb = fc.tuple(fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N }));
    fc.assert(
      fc.property(fc.array(spanArb, { maxLength: 8 }), (spans) => {
        const r = fromSpans(spans.map(([start, end]) => ({ start, end })));
        expectNormal(r);
        const bits = new Array<boolean>(N).fill(false);
        for (const [s, e] of spans) for (let p = s; p < e; p++) bits[p] = true;
        expect(r).toEqual(fromBits(bits));
        expect(fromSpans(toSpans(r))).toEqual(r);
      }),
      RUNS,
    );
  });

  it('the algebra holds: a − b and a ∩ b partition a; (a ∪ b) − b = a − b; subset iff a ∩ b = a', () => {
    fc.assert(
      fc.property(setBits, setBits, (x, y) => {
        const a = fromBits(x);
        const b = fromBits(y);
        expect(union(subtract(a, b), intersect(a, b))).toEqual(a);
        expect(intersect(subtract(a, b), b)).toEqual(EMPTY);
        expect(subtract(union(a, b), b)).toEqual(subtract(a, b));
        expect(isSubset(a, b)).toBe(equals(intersect(a, b), a));
        expect(union(a, b)).toEqual(union(b, a));
        expect(intersect(a, b)).toEqual(intersect(b, a));
      }),
      RUNS,
    );
  });

  it('operations never change their (frozen) inputs', () => {
    fc.assert(
      fc.property(setBits, setBits, pos, pos, (x, y, s, e) => {
        const a = fromBits(x);
        const b = fromBits(y);
        const before = [a.slice(), b.slice()];
        union(a, b);
        intersect(a, b);
        subtract(a, b);
        clip(a, s, e);
        isSubset(a, b);
        expect([a, b]).toEqual(before);
      }),
      { numRuns: 100 },
    );
  });
});

describe('interval set helpers', () => {
  it('range(s, e) is [s,e), and empty when e ≤ s', () => {
    expect(range(2, 5)).toEqual([2, 5]);
    expect(range(5, 5)).toEqual(EMPTY);
    expect(range(6, 5)).toEqual(EMPTY);
  });

  it('adjacent ranges merge: [0,2) ∪ [2,4) = [0,4)', () => {
    expect(union(range(0, 2), range(2, 4))).toEqual([0, 4]);
  });

  it('format names every range, ∅ for the empty set', () => {
    expect(format(EMPTY)).toBe('∅');
    expect(format(union(range(0, 8), range(12, 14)))).toBe('[0,8) ∪ [12,14)');
  });

  it('toSpans lists ranges ascending as {start, end}', () => {
    expect(toSpans(union(range(12, 14), range(0, 8)))).toEqual([
      { start: 0, end: 8 },
      { start: 12, end: 14 },
    ]);
  });
});
