import { Rng, deriveSeed } from '../../src/sim';

describe('Rng (mulberry32)', () => {
  it('is deterministic from its seed', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 100 }, () => a.nextUint32());
    const ys = Array.from({ length: 100 }, () => b.nextUint32());
    expect(xs).toEqual(ys);
    expect(new Set(xs).size).toBe(100);
    expect(new Rng(43).nextUint32()).not.toBe(xs[0]);
  });

  it('draws floats in [0,1) and integers in their ranges, roughly uniformly', () => {
    const r = new Rng(7);
    const buckets = new Array<number>(10).fill(0);
    const ints = new Set<number>();
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const x = r.next();
      if (!(x >= 0 && x < 1)) outside++;
      buckets[Math.floor(x * 10)]!++;
      ints.add(r.between(3, 5));
    }
    expect(outside).toBe(0);
    expect([...ints].sort()).toEqual([3, 4, 5]);
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(600);
  });

  it('weighted draws follow the weights', () => {
    const r = new Rng(1);
    const n = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 40_000; i++) n[r.weighted({ a: 1, b: 3, c: 0 })]++;
    expect(n.c).toBe(0);
    expect(n.b / n.a).toBeGreaterThan(2.7);
    expect(n.b / n.a).toBeLessThan(3.3);
  });

  it('derives distinct, stable seeds per stream', () => {
    expect(deriveSeed(1, 0)).toBe(deriveSeed(1, 0));
    const seeds = new Set(Array.from({ length: 10_000 }, (_, i) => deriveSeed(1, i)));
    expect(seeds.size).toBe(10_000);
    expect(deriveSeed(2, 0)).not.toBe(deriveSeed(1, 0));
  });
});
