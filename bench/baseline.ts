/**
 * The seed's reference check `assert_compaction_safe`, ported literally (three stateless
 * checks over the session's truncation log), as the baseline for the engine benchmark.
 * It returns the refusal message (or null) instead of raising: a thrown Error would charge
 * the baseline for a stack trace the Python original does not need for its decision.
 */
import type { Unit } from '../src/engine/events';

export type TruncationLog = readonly (readonly [number, number])[];

export function assertCompactionSafe(
  summaryInputStart: number,
  tailStart: number,
  recoveryFloorSpan: number,
  priorTruncations: TruncationLog,
  floorUnit: Unit,
  truncatorUnit: Unit,
): string | null {
  if (floorUnit !== truncatorUnit) {
    return `recovery floor unit '${floorUnit}' cannot be honored by truncator unit '${truncatorUnit}'; guarantee is unenforceable`;
  }
  const floorStart = tailStart - recoveryFloorSpan;
  if (summaryInputStart > floorStart) {
    return `summarizer input starts at ${summaryInputStart}, but recovery floor begins at ${floorStart}; floor is not a subset of input`;
  }
  for (const [lo, hi] of priorTruncations) {
    if (hi > floorStart && lo < tailStart) {
      return `prior truncation [${lo}, ${hi}) intersects recovery floor [${floorStart}, ${tailStart}); evidence already evicted`;
    }
  }
  return null;
}
