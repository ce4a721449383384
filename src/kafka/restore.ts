/**
 * Restoring per-partition session state, and the input position it is at, from the compacted
 * changelog (contract §8: state moves with its partition; changelogKeys.ts). A one-off reader of the transport (a kafkajs consumer in a group of its
 * own, having no manual partition assignment) reads the changelog. Where "the end" is: before reading, the new owner
 * writes a barrier record (a unique nonce) to the partition in a committed transaction of its
 * freshly initialised (zombie-fencing) producer; everything before the barrier is stable, so the
 * partition is restored once the barrier is read back.
 */
import { randomUUID } from 'node:crypto';
import {
  BARRIER_KEY,
  decodePosition,
  positionKey,
  refusedChunkOfKey,
  sessionOfKey,
  stampOfHeaders,
} from './changelogKeys';
import type { RefusedFilter } from './capacity/refusedFilter';
import type { SessionStates } from './sessionStates';
import { OperationalError } from '../errors';
import type { InRecord, TransactionalProducer, Transport } from './transport';

/** How long one read of the changelog up to the barriers may take before it is tried again. */
export const RESTORE_TIMEOUT_MS = 120_000;

export async function writeBarrier(
  producer: TransactionalProducer,
  topic: string,
  partition: number,
): Promise<string> {
  const nonce = randomUUID();
  const txn = await producer.transaction();
  try {
    await txn.send([{ topic, messages: [{ key: BARRIER_KEY, value: nonce, partition }] }]);
    await txn.commit();
  } catch (e) {
    // The send's or commit's failure is what the caller acts on (a new producer, a retry); an
    // abort that fails too adds nothing: the new producer fences the transaction anyway.
    await txn.abort().catch(() => undefined);
    throw e;
  }
  return nonce;
}

export interface RestoreTarget {
  partition: number;
  nonce: string;
  states: SessionStates;
  /** The partition's refused-at-capacity filter, filled from its chunks' records (if given). */
  refused?: RefusedFilter;
  /**
   * Set by the restore: the input offset the restored state is at (the last position record of
   * `inputTopic` before the barrier), or null when the changelog has none (a changelog written
   * before position records, or a partition that never committed a batch).
   */
  position?: string | null;
  /** Set by the restore: what the read saw of the partition (for a restore found wrong). */
  read?: ReadSummary;
}

/** The offsets a restore read of one changelog partition, up to and including its barrier. */
export interface ReadSummary {
  records: number;
  firstOffset: string | null;
  lastOffset: string | null;
}

/**
 * Fetch sizes of the restore consumer: large, so that a restore is a few big reads (kafkajs'
 * defaults, 1 MiB per partition and 10 MiB per fetch, make it many small round trips).
 */
export const RESTORE_MAX_BYTES_PER_PARTITION = 16 * 1024 * 1024;
export const RESTORE_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Reads the changelog until each target's barrier; fills `states` with each session's
 * serialized state, decoded on its first use (tombstones delete), and its stamp (a record
 * without one: `clock()` at the restore's start), `refused` with the refused
 * filter's chunks, and `position` with the input position of `inputTopic`.
 */
export async function restorePartitions(
  transport: Transport,
  topic: string,
  inputTopic: string,
  groupPrefix: string,
  targets: RestoreTarget[],
  timeoutMs: number,
  clock: () => number = Date.now,
): Promise<void> {
  if (targets.length === 0) return;
  const ownPosition = positionKey(inputTopic);
  const now = clock();
  for (const t of targets) {
    t.position = null;
    t.read = { records: 0, firstOffset: null, lastOffset: null };
  }
  const pending = new Map(targets.map((t) => [t.partition, t]));
  const reader = transport.partitionReader({
    groupId: `${groupPrefix}.restore.${randomUUID()}`,
    topic,
    maxBytesPerPartition: RESTORE_MAX_BYTES_PER_PARTITION,
    maxBytes: RESTORE_MAX_BYTES,
    maxWaitMs: 100,
    partitionsConcurrently: targets.length,
  });
  let finish!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const timer = setTimeout(
    () =>
      fail(
        new Error(
          `state restore of ${topic} partitions ${[...pending.keys()].join(',')} timed out after ${timeoutMs} ms`,
        ),
      ),
    timeoutMs,
  );
  try {
    await reader.start(async (batch) => {
      const target = pending.get(batch.partition);
      if (!target) {
        if (!targets.some((t) => t.partition === batch.partition)) reader.pause([batch.partition]);
        return;
      }
      const read = target.read!; // set for every target before the read
      for (const m of batch.messages) {
        read.records += 1;
        read.firstOffset ??= m.offset;
        read.lastOffset = m.offset;
        if (!applyChangelogRecord(target, m, ownPosition, now)) continue;
        pending.delete(batch.partition);
        reader.pause([batch.partition]);
        if (pending.size === 0) finish();
        return;
      }
    });
    await done;
  } finally {
    clearTimeout(timer);
    // The restore's outcome is already decided; a one-off group (a fresh id, no offsets
    // committed) whose member fails to leave expires on its own after its session timeout.
    await reader.stop().catch(() => undefined);
  }
}

/**
 * One changelog record of `target`'s partition, applied to it: a session's state (a tombstone
 * deletes; a record written before stamps counts as reached at `now`), the input position of
 * the input topic (`ownPosition`, its key), a chunk of the refused filter. True when it is the
 * target's barrier: the partition is restored and nothing after it belongs to this restore.
 */
export function applyChangelogRecord(
  target: RestoreTarget,
  m: Pick<InRecord, 'key' | 'value' | 'headers'>,
  ownPosition: string,
  now: number,
): boolean {
  const key = m.key?.toString('utf8') ?? '';
  const sessionId = sessionOfKey(key);
  if (sessionId !== null) {
    if (m.value === null) target.states.delete(sessionId);
    else target.states.setSerialized(sessionId, m.value, stampOfHeaders(m.headers) ?? now);
  } else if (key === ownPosition) {
    target.position = decodePosition(m.value);
  } else if (key === BARRIER_KEY) {
    return m.value?.toString('utf8') === target.nonce;
  } else {
    const chunk = refusedChunkOfKey(key);
    if (chunk !== null) target.refused?.restore(chunk, m.value);
  }
  return false;
}

/** A restored partition whose input position is behind the group's committed offset. */
export interface RestoreBehind {
  readonly partition: number;
  readonly position: string;
  readonly committed: string;
  readonly read?: ReadSummary;
}

/**
 * The targets read back to an input position before the group's committed offset of their
 * partition (`committed`: the partitions that have one). Every batch's transaction writes the
 * position record and commits the offset together, so the committed offset can lag the position
 * (a coordinator failover, changelogKeys.ts) but never lead it: when it does, the read missed
 * committed transactions. A target without a position (a changelog written before position
 * records) is not judged.
 */
export function behindCommitted(
  targets: readonly RestoreTarget[],
  committed: ReadonlyMap<number, string>,
): RestoreBehind[] {
  const behind: RestoreBehind[] = [];
  for (const t of targets) {
    const c = committed.get(t.partition);
    const position = t.position ?? null;
    if (c === undefined || position === null) continue;
    if (BigInt(position) < BigInt(c))
      behind.push({
        partition: t.partition,
        position,
        committed: c,
        ...(t.read === undefined ? {} : { read: t.read }),
      });
  }
  return behind;
}

/** A restore that must not be used: its read missed committed transactions (`behindCommitted`). */
export class RestoreBehindCommittedError extends OperationalError {
  constructor(readonly behind: readonly RestoreBehind[]) {
    super(
      'RESTORE_BEHIND_COMMITTED',
      `the changelog was read back to an input position before the group's committed offset (${behind
        .map(
          (b) =>
            `partition ${b.partition}: position ${b.position}, committed ${b.committed}` +
            (b.read === undefined
              ? ''
              : `, ${b.read.records} records read at offsets ${b.read.firstOffset ?? '-'} to ${b.read.lastOffset ?? '-'}`),
        )
        .join('; ')}): committed transactions are missing from what was read; reading again`,
    );
    this.name = 'RestoreBehindCommittedError';
  }
}
