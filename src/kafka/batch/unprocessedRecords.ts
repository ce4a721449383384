/**
 * The records of a fetched batch the committed state does not include yet. kafkajs 2.2.4 can
 * hand out a fetch answered late by a partition's former leader (a broker paused, then resumed
 * after the leadership moved) as a new batch of records already processed and committed: they
 * are skipped, not processed twice. Held by test/unit/unprocessed-records.test.ts
 * and, on a real cluster, test/integration/cluster/cluster-faults.test.ts ("SIGSTOP of a
 * broker beyond the session and replica lag timeouts, then SIGCONT: exactly once").
 */

/**
 * The records at or after `position`, the offset after the last input record the committed
 * state includes (null: not known, all of them).
 */
export function unprocessedRecords<M extends { offset: string }>(
  messages: readonly M[],
  position: bigint | null,
): readonly M[] {
  if (position === null) return messages;
  const first = messages[0];
  if (first === undefined || BigInt(first.offset) >= position) return messages;
  return messages.filter((m) => BigInt(m.offset) >= position);
}
