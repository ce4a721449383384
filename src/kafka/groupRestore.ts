/**
 * Restoring partition tasks from the changelog through their public restore interface
 * (`RestoringTask`, which PartitionTask implements): the partitions a rebalance assigned,
 * together, until it succeeds or they are gone (`restoreGroup`); and one attempt for any set of
 * tasks (`restoreOnce`), which a task's own resynchronisation uses. Per attempt: each task's
 * producer connected (a new one fences any zombie of its partition), its state cleared and a
 * barrier written; then one read of the changelog up to every barrier (restore.ts), checked
 * against the group's committed offsets (a read behind them is tried again).
 */
import type { Logger } from 'pino';
import { retryUntilDone } from '../retry';
import type { ProcessorObserver } from './processorObserver';
import { RestoreBehindCommittedError, behindCommitted, type RestoreTarget } from './restore';

/** Pause before a failed restore or resynchronisation of a partition is tried again. */
export const RESTORE_RETRY_MS = 1_000;

/** What a restore needs of the instance that runs the tasks. */
export interface RestoreHost {
  readonly log: Logger;
  readonly observer: ProcessorObserver;
  readonly clock: () => number;
  /** The instance is stopping: a restore or resync in flight ends quietly. */
  stopping(): boolean;
  /** A task became running (or stopped being): the instance's readiness may have changed. */
  readinessChanged(): void;
  /** Reads the changelog up to each target's barrier, filling it (restorePartitions). */
  readChangelog(targets: RestoreTarget[]): Promise<void>;
  /** The group's committed input offsets of `partitions`, for those that have one. */
  committedOffsets(partitions: readonly number[]): Promise<ReadonlyMap<number, string>>;
  /**
   * The pause before a failed attempt is tried again (a restore, a resync, a batch that failed
   * before its transaction); default 1 s (tests shorten it).
   */
  readonly retryPauseMs?: number;
}

/** What a restore does to a task, each step by the task itself. */
export interface RestoringTask {
  readonly partition: number;
  /** Revoked or closed: its restore is no longer wanted. */
  readonly ended: boolean;
  /** Sessions it holds. */
  readonly sessionCount: number;
  /** assigned → restoring; `settled` settles when the restore ends (batches wait for it). */
  beginRestore(settled: Promise<void>): void;
  /** Its producer replaced by a new one (after a failed attempt: fences the old one). */
  renewProducer(): Promise<void>;
  /** Producer connected, state cleared, barrier written: the target the changelog read fills. */
  prepareRestore(): Promise<RestoreTarget>;
  /** The changelog was read up to its barrier: `position` is the input offset the state is at. */
  restored(position: string | null): void;
}

/**
 * New tasks (assigned → restoring → running), restored together, until it succeeds or they are
 * all gone: each attempt after a failed one begins with new producers.
 */
export function restoreGroup(tasks: readonly RestoringTask[], host: RestoreHost): void {
  if (tasks.length === 0) return;
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  for (const t of tasks) t.beginRestore(settled);
  const gone = () => host.stopping() || tasks.every((t) => t.ended);
  // The restore's time, as reported, includes its failed attempts.
  const started = host.clock();
  void retryUntilDone(
    async (attempt) => {
      // A task revoked meanwhile is left out: its partition is another member's now, whose
      // commits would keep its read behind (behindCommitted) and hold the others back.
      const live = tasks.filter((t) => !t.ended);
      if (attempt > 1) for (const t of live) await t.renewProducer();
      await restoreOnce(live, host, started);
    },
    gone,
    (e) => host.log.warn({ err: e }, 'state restore failed; retrying'),
    host.retryPauseMs ?? RESTORE_RETRY_MS,
  )
    .catch((e: unknown) => host.log.warn({ err: e }, 'state restore failed'))
    .finally(settle);
}

/** One attempt: barriers, one changelog read; the tasks are told where their state is. */
export async function restoreOnce(
  tasks: readonly RestoringTask[],
  host: RestoreHost,
  started: number = host.clock(),
): Promise<void> {
  const targets: RestoreTarget[] = [];
  for (const t of tasks) targets.push(await t.prepareRestore());
  await host.readChangelog(targets);
  // Read after the changelog: the transactions before the barriers have ended by then, so
  // their offsets are committed, and a read that missed one of them shows (behindCommitted).
  // Only a target with a position is judged: on a fresh start none has one, and nothing is asked.
  // Nor is one whose task was revoked during the read: another member may be committing it.
  const judged = targets.filter((t, i) => (t.position ?? null) !== null && !tasks[i]!.ended);
  const committed =
    judged.length === 0 ? new Map() : await host.committedOffsets(judged.map((t) => t.partition));
  const behind = behindCommitted(judged, committed);
  if (behind.length > 0) throw new RestoreBehindCommittedError(behind);
  for (const [i, t] of tasks.entries()) t.restored(targets[i]!.position ?? null);
  const ms = host.clock() - started;
  host.observer.restored?.(ms / 1000);
  host.readinessChanged();
  const sessions = tasks.reduce((n, t) => n + t.sessionCount, 0);
  // Where each partition's state is, by input offset: what its consumer resumes from.
  const positions = Object.fromEntries(targets.map((t) => [t.partition, t.position ?? null]));
  host.log.info(
    { partitions: tasks.map((t) => t.partition), positions, sessions, ms },
    'state restored',
  );
}
