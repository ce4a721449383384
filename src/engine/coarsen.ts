/**
 * Bounded range sets (contract §4a): after every event, each set of more than 128 ranges is
 * coarsened in the direction that can only make later decisions stricter, and every position
 * whose membership changed joins the coarsened set K (which no acknowledgement writes off).
 * - pins, T and X (more positions never approve more): the neighbouring ranges with the
 *   smallest gap are merged (leftmost on a tie), until 128 remain;
 * - S, P, A0 and A1 (fewer positions never approve more): the shortest range is removed
 *   (leftmost on a tie), until 128 remain.
 * A merge leaves every other gap as it was, and a removal every other length, so the repeated
 * step of §4a is the same as taking the smallest gaps (or lengths) at once, ordered by size and
 * then position: that is what these functions do.
 */
import type { Unit } from './events';
import type { Collector } from './collector';
import { EMPTY, type IntervalSet, union } from './intervals';
import { type PerUnit, type SessionState, inUnit, withUnit } from './state';

/** At most this many ranges per set (contract §4a). */
export const MAX_RANGES = 128;

function rangeCount(a: IntervalSet): number {
  return a.length / 2;
}

/** The `excess` indices with the smallest `size(i)`, ties to the lowest index. */
function smallest(count: number, excess: number, size: (i: number) => number): Set<number> {
  if (excess === 1) {
    // The usual case (one range over after an event): one pass, no sort.
    let best = 0;
    for (let i = 1; i < count; i++) if (size(i) < size(best)) best = i;
    return new Set([best]);
  }
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((x, y) => size(x) - size(y) || x - y);
  return new Set(order.slice(0, excess));
}

/** The set with gaps merged until 128 ranges remain, and the positions added. */
export function mergeCoarsened(a: IntervalSet): { set: IntervalSet; changed: IntervalSet } {
  const n = rangeCount(a);
  if (n <= MAX_RANGES) return { set: a, changed: EMPTY };
  // Gap i lies between range i and range i + 1.
  const merged = smallest(n - 1, n - MAX_RANGES, (i) => a[2 * i + 2]! - a[2 * i + 1]!);
  const set: number[] = [a[0]!];
  const changed: number[] = [];
  for (let i = 0; i < n - 1; i++) {
    if (merged.has(i)) changed.push(a[2 * i + 1]!, a[2 * i + 2]!);
    else set.push(a[2 * i + 1]!, a[2 * i + 2]!);
  }
  set.push(a[2 * n - 1]!);
  return { set, changed };
}

/** The set with its shortest ranges removed until 128 remain, and the positions removed. */
export function removeCoarsened(a: IntervalSet): { set: IntervalSet; changed: IntervalSet } {
  const n = rangeCount(a);
  if (n <= MAX_RANGES) return { set: a, changed: EMPTY };
  const removed = smallest(n, n - MAX_RANGES, (i) => a[2 * i + 1]! - a[2 * i]!);
  const set: number[] = [];
  const changed: number[] = [];
  for (let i = 0; i < n; i++) (removed.has(i) ? changed : set).push(a[2 * i]!, a[2 * i + 1]!);
  return { set, changed };
}

type Direction = typeof mergeCoarsened;

/** One coarsening pass over a session's sets, collecting K's additions per unit. */
class Pass {
  readonly names: string[] = [];
  private added: PerUnit = {};

  constructor(private readonly s: SessionState) {}

  /** `name`'s set coarsened in `direction`, its changes noted in `unit`. */
  one(name: string, unit: Unit, a: IntervalSet, direction: Direction): IntervalSet {
    if (rangeCount(a) <= MAX_RANGES) return a;
    const { set, changed } = direction(a);
    this.names.push(`${name} (${unit})`);
    this.added = withUnit(this.added, unit, union(inUnit(this.added, unit), changed));
    return set;
  }

  perUnit(name: string, sets: PerUnit, direction: Direction): PerUnit {
    let out = sets;
    for (const unit of Object.keys(sets) as Unit[]) {
      const before = sets[unit]!;
      const after = this.one(name, unit, before, direction);
      if (after !== before) out = withUnit(out, unit, after);
    }
    return out;
  }

  /** K ∪= the changes, then K itself merged down to 128 ranges per unit. */
  finishK(): void {
    const s = this.s;
    let k = s.coarsened;
    for (const unit of Object.keys(this.added) as Unit[]) {
      k = withUnit(k, unit, union(inUnit(k, unit), this.added[unit]!));
    }
    for (const unit of Object.keys(k) as Unit[]) {
      const merged = mergeCoarsened(k[unit]!);
      if (merged.set !== k[unit]) {
        k = withUnit(k, unit, merged.set);
        this.names.push(`K (${unit})`);
      }
    }
    s.coarsened = k;
  }
}

function anyOver(sets: PerUnit): boolean {
  for (const unit in sets) if (rangeCount(sets[unit as Unit]!) > MAX_RANGES) return true;
  return false;
}

function needsCoarsening(s: SessionState): boolean {
  const limit = 2 * MAX_RANGES;
  return (
    s.pins.length > limit ||
    s.truncated.length > limit ||
    s.summary.length > limit ||
    s.ackPermanent.length > limit ||
    anyOver(s.spilled) ||
    anyOver(s.ackOnce) ||
    anyOver(s.unspillable)
  );
}

/** contract §4a at the end of step 3: every set bounded, K noted, one STATE_COARSENED. */
export function coarsenState(s: SessionState, out: Collector): void {
  if (!needsCoarsening(s)) return;
  const pass = new Pass(s);
  const u = s.unit;
  if (u !== null) {
    s.pins = pass.one('pins', u, s.pins, mergeCoarsened);
    s.truncated = pass.one('T', u, s.truncated, mergeCoarsened);
    s.summary = pass.one('S', u, s.summary, removeCoarsened);
    s.ackPermanent = pass.one('A0', u, s.ackPermanent, removeCoarsened);
  }
  s.unspillable = pass.perUnit('X', s.unspillable, mergeCoarsened);
  s.spilled = pass.perUnit('P', s.spilled, removeCoarsened);
  s.ackOnce = pass.perUnit('A1', s.ackOnce, removeCoarsened);
  pass.finishK();
  out.note('coarsened');
  out.audit(
    'STATE_COARSENED',
    `range sets coarsened to at most ${MAX_RANGES} ranges each, in the direction that only refuses more: ${pass.names.join(', ')}; a loss acknowledgement no longer writes off the positions that changed`,
    null,
    EMPTY,
  );
}
