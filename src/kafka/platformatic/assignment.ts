/**
 * A group join's assignment against the one before it. The library reports each join's whole
 * assignment (the eager protocol), never a revocation (design-notes.md gap 9): what left it is
 * revoked, what entered it is new.
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

/** What a join took away (`revoked`) and gave (`added`), each ascending. */
export function assignmentChange(
  before: readonly number[],
  now: readonly number[],
): { revoked: number[]; added: number[] } {
  const had = new Set(before);
  const has = new Set(now);
  return {
    revoked: [...had].filter((p) => !has.has(p)).sort((a, b) => a - b),
    added: [...has].filter((p) => !had.has(p)).sort((a, b) => a - b),
  };
}
