/**
 * Contract §4a (bounded range sets) and §6 (bounded reported lists): every set holds at most 128
 * ranges, coarsened in the fail-closed direction with the changed positions in K, which no
 * acknowledgement writes off; every reported list holds at most 16 ranges.
 */
import fc from 'fast-check';
import { MAX_RANGES, mergeCoarsened, removeCoarsened } from '../../src/engine/coarsen';
import {
  type IntervalSet,
  intersect,
  isSubset,
  reported,
  size,
  subtract,
  union,
} from '../../src/engine/intervals';
import { inUnit } from '../../src/engine/state';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditsOf, play, policyIn, verdictOf } from '../support/engineHarness';

/** `n` ranges of length `len(i)` separated by gaps `gap(i)` (gap i after range i). */
function ranges(n: number, len: (i: number) => number, gap: (i: number) => number): IntervalSet {
  const out: number[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    out.push(at, at + len(i));
    at += len(i) + gap(i);
  }
  return out;
}

const count = (a: IntervalSet) => a.length / 2;

/** Sets of 1 to 300 ranges, lengths and gaps of 1 to 4 (many ties). */
const fragmented = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 })), {
    minLength: 1,
    maxLength: 300,
  })
  .map((shape) =>
    ranges(
      shape.length,
      (i) => shape[i]![0],
      (i) => shape[i]![1],
    ),
  );

/**
 * §4a read literally, one step at a time: while over 128 ranges, merge the neighbours with the
 * smallest gap (or remove the shortest range), the leftmost on a tie.
 */
function stepByStep(a: IntervalSet, direction: 'merge' | 'remove'): IntervalSet {
  const r = [...a];
  while (r.length / 2 > MAX_RANGES) {
    let best = 0;
    if (direction === 'merge') {
      for (let i = 1; i < r.length / 2 - 1; i++) {
        if (r[2 * i + 2]! - r[2 * i + 1]! < r[2 * best + 2]! - r[2 * best + 1]!) best = i;
      }
      r.splice(2 * best + 1, 2);
    } else {
      for (let i = 1; i < r.length / 2; i++) {
        if (r[2 * i + 1]! - r[2 * i]! < r[2 * best + 1]! - r[2 * best]!) best = i;
      }
      r.splice(2 * best, 2);
    }
  }
  return r;
}

describe('§4a merging (pins, T, X, K)', () => {
  it('merges the smallest gaps first, the leftmost on a tie, until 128 ranges remain', () => {
    // 131 ranges of length 1; gaps of 5, except gap 7 = 1, gaps 3 and 90 = 2 (a tie), gap 100 = 2.
    const gaps = new Map([
      [7, 1],
      [3, 2],
      [90, 2],
      [100, 2],
    ]);
    const a = ranges(
      131,
      () => 1,
      (i) => gaps.get(i) ?? 5,
    );
    const { set, changed } = mergeCoarsened(a);
    expect(count(set)).toBe(128);
    // Gap 7 (1), then gaps 3 and 90 (2, leftmost first); gap 100 (also 2) stays open.
    const gapRange = (i: number) => [a[2 * i + 1]!, a[2 * i + 2]!];
    expect(changed).toEqual([...gapRange(3), ...gapRange(7), ...gapRange(90)]);
    expect(set).toEqual(union(a, changed));
  });

  it('changes nothing at 128 ranges or fewer', () => {
    const a = ranges(
      128,
      () => 1,
      () => 1,
    );
    expect(mergeCoarsened(a)).toEqual({ set: a, changed: [] });
  });

  it('equals §4a step by step, and only adds positions: exactly `changed`', () => {
    fc.assert(
      fc.property(fragmented, (a) => {
        const { set, changed } = mergeCoarsened(a);
        expect(set).toEqual(stepByStep(a, 'merge'));
        expect(isSubset(a, set)).toBe(true);
        expect(subtract(set, a)).toEqual(changed);
      }),
      { numRuns: 200 },
    );
  });
});

describe('§4a removal (S, P, A0, A1)', () => {
  it('removes the shortest ranges first, the leftmost on a tie, until 128 remain', () => {
    const lengths = new Map([
      [50, 1],
      [10, 2],
      [120, 2],
      [125, 2],
    ]);
    const a = ranges(
      131,
      (i) => lengths.get(i) ?? 3,
      () => 4,
    );
    const { set, changed } = removeCoarsened(a);
    expect(count(set)).toBe(128);
    const rangeAt = (i: number) => [a[2 * i]!, a[2 * i + 1]!];
    expect(changed).toEqual([...rangeAt(10), ...rangeAt(50), ...rangeAt(120)]);
    expect(set).toEqual(subtract(a, changed));
  });

  it('equals §4a step by step, and only removes positions: exactly `changed`', () => {
    fc.assert(
      fc.property(fragmented, (a) => {
        const { set, changed } = removeCoarsened(a);
        expect(set).toEqual(stepByStep(a, 'remove'));
        expect(isSubset(set, a)).toBe(true);
        expect(subtract(a, set)).toEqual(changed);
      }),
      { numRuns: 200 },
    );
  });
});

describe('§4a in the engine', () => {
  /** `n` turns, every other one pinned: n/2 non-adjacent pinned ranges. */
  function alternatingPins(n: number): SessionBuilder {
    const b = new SessionBuilder('frag').open(policyIn('TURNS', 2));
    for (let i = 0; i < n; i++) b.turns(1, 1, i % 2 === 0 ? ['CONSTRAINT'] : []);
    return b;
  }

  it('pins stay at 128 ranges at most, cover every pinned turn, and the merged gaps are in K', () => {
    const p = play(alternatingPins(400).events);
    expect(count(p.state.pins)).toBe(MAX_RANGES);
    for (let t = 0; t < 400; t += 2) expect(isSubset([t, t + 1], p.state.pins)).toBe(true);
    const k = inUnit(p.state.coarsened, 'TURNS');
    // 200 pinned turns in 128 ranges: 72 one-turn gaps were merged.
    expect(size(k)).toBe(72);
    expect(subtract(p.state.pins, k).length).toBeGreaterThan(0);
    expect(isSubset(k, p.state.pins)).toBe(true);
  });

  it('emits one STATE_COARSENED on each event that coarsened something, and none otherwise', () => {
    const p = play(alternatingPins(400).events);
    const coarsenedSteps = p.steps.filter((s) =>
      auditsOf(s.outputs).some((a) => a.code === 'STATE_COARSENED'),
    );
    // The 129th pinned range appears at turn 256; every later pinned turn adds one more.
    expect(coarsenedSteps).toHaveLength(72);
    for (const s of coarsenedSteps) {
      const audits = auditsOf(s.outputs);
      expect(audits).toHaveLength(1);
      expect(audits[0]).toMatchObject({ kind: 'ADVISORY', ranges: [] });
      expect(audits[0]!.message).toContain('pins (TURNS)');
    }
  });

  it('a loss acknowledgement never writes off a position of K', () => {
    // 200 one-turn truncations, non-adjacent: T passes 128 ranges and is merged.
    const b = new SessionBuilder('k').open(policyIn('TURNS', 2)).turns(500, 1);
    for (let t = 0; t < 400; t += 2) b.truncate('TURNS', t, t + 1);
    b.acknowledge('TURNS', 0, 500);
    const s = play(b.events).state;
    const k = inUnit(s.coarsened, 'TURNS');
    // T merged 72 gaps into K; the write-off T − K then had 200 ranges, and A0's removal put
    // its 72 shortest (leftmost) into K as well.
    expect(size(k)).toBe(144);
    expect(count(s.ackPermanent)).toBe(MAX_RANGES);
    expect(intersect(s.ackPermanent, k)).toEqual([]);
    // What was really truncated (outside K) is written off.
    expect(subtract(s.truncated, k)).toEqual(s.ackPermanent);
  });

  it('spills fragmenting P: P is bounded by removal (fewer spilled positions only refuse more)', () => {
    const b = new SessionBuilder('p').open(policyIn('TURNS', 2)).turns(400, 1);
    for (let t = 0; t < 400; t += 2) b.outOfBand().spilled(`s${t}`, 'TURNS', t, t + 1);
    const s = play(b.events).state;
    const p = inUnit(s.spilled, 'TURNS');
    expect(count(p)).toBe(MAX_RANGES);
    expect(size(inUnit(s.coarsened, 'TURNS'))).toBe(72);
  });
});

describe('§6 reported lists', () => {
  it('a set of more than 16 ranges is reported as its first 15 and one range from the 16th to the last', () => {
    const a = ranges(
      20,
      () => 1,
      () => 1,
    );
    expect(reported(a)).toEqual([...a.slice(0, 30), a[30]!, a[39]!]);
    expect(
      reported(
        ranges(
          16,
          () => 1,
          () => 1,
        ),
      ),
    ).toEqual(
      ranges(
        16,
        () => 1,
        () => 1,
      ),
    );
  });

  it("a refusal's holes, its spill request's holes and its diagnostic name at most 16 ranges", () => {
    // 20 pinned single turns below the summary input: EVICTED_PINNED has 20 ranges.
    const b = new SessionBuilder('holes').open(policyIn('TURNS', 2, { coverage: 'PINNED' }));
    for (let t = 0; t < 60; t++) b.turns(1, 1, t % 2 === 1 && t < 40 ? ['CONSTRAINT'] : []);
    b.request('r', 'TURNS', 40, 50, 50);
    const p = play(b.events);
    const v = verdictOf(p.last);
    expect(v.decision).toBe('REFUSE');
    for (const r of v.reasons) expect(r.holes.length).toBeLessThanOrEqual(16);
    const spill = p.last.outputs.find((o) => o.record === 'spill-request');
    expect(spill?.value.holes).toHaveLength(16);
    const ranges16 = (v.diagnostic ?? '').match(/\[\d+,\d+\)/g) ?? [];
    expect(ranges16.length).toBeLessThanOrEqual(16 * v.reasons.length + 1);
  });
});
