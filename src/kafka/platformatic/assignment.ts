/**
 * A group join's assignment against the one before it. The library reports each join's whole
 * assignment (the eager protocol), never a revocation (design-notes.md gap 9): what left it is
 * revoked, what entered it is new; and when the join does not continue the member's last one
 * (`membershipContinues`), everything it held is revoked and everything it has is new.
 */

/** The partitions of `topic` in a join's assignments, ascending. */
export function topicPartitions(
  assignments: ReadonlyArray<{ topic: string; partitions: number[] }> | null | undefined,
  topic: string,
): number[] {
  const partitions = (assignments ?? [])
    .filter((a) => a.topic === topic)
    .flatMap((a) => a.partitions);
  return [...new Set(partitions)].sort((a, b) => a - b);
}

/** Who joined, and in which generation (null: not known). */
export interface Membership {
  readonly generationId: number | null;
  readonly memberId: string | null;
}

/**
 * Whether the join `now` continues `before`, the member's last join: the same member id in the
 * very next generation. Only then can no other member have owned one of its partitions in
 * between, since the eager protocol gives a partition to one member per generation. A member
 * that missed a generation (evicted past its session timeout while stalled or cut off, and let
 * back in under a new member id by the library's silent rejoin; or a sync that failed) can get
 * "its" partitions back after another member processed their records and moved their state on:
 * kept as they were, its state and position would be stale, and it would process those records
 * again (docs/decisions.md 241).
 */
export function membershipContinues(before: Membership | null, now: Membership): boolean {
  if (before === null || before.generationId === null || now.generationId === null) return false;
  return (
    before.memberId !== null &&
    before.memberId === now.memberId &&
    now.generationId === before.generationId + 1
  );
}

/**
 * What a join took away (`revoked`) and gave (`added`), each ascending. A join that does not
 * continue the membership (`continued` false) revokes all the member held and gives all it has.
 */
export function assignmentChange(
  before: readonly number[],
  now: readonly number[],
  continued = true,
): { revoked: number[]; added: number[] } {
  if (!continued)
    return { revoked: [...before].sort((a, b) => a - b), added: [...now].sort((a, b) => a - b) };
  const had = new Set(before);
  const has = new Set(now);
  return {
    revoked: [...had].filter((p) => !has.has(p)).sort((a, b) => a - b),
    added: [...has].filter((p) => !had.has(p)).sort((a, b) => a - b),
  };
}
