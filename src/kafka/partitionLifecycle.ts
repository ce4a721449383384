/**
 * The life of one assigned input partition as named states and checked transitions (after
 * Kafka Streams' `Task.State`):
 *
 *   assigned ──▶ restoring ──▶ running ◀──▶ resyncing
 *       │            │            │            │
 *       └────────────┴─────┬──────┴────────────┘
 *                          ▼
 *                  revoked │ closed        (terminal)
 *
 * - assigned: the group gave us the partition; no producer connected, no state yet.
 * - restoring: a new transactional producer (fencing any zombie), a barrier, the changelog read.
 * - running: batches are processed; the only state in which they are.
 * - resyncing: a batch's transaction failed with an unknown outcome or we were fenced: a new
 *   producer, state and input position from the changelog again (changelogKeys.ts).
 * - revoked: the group took the partition away (a rebalance).
 * - closed: the processor stopped.
 *
 * Any other move is a bug and throws `IllegalPartitionTransitionError` (src/lifecycle.ts).
 */
import { IllegalTransitionError, Lifecycle, allows, type TransitionTable } from '../lifecycle';

export const PARTITION_STATES = [
  'assigned',
  'restoring',
  'running',
  'resyncing',
  'revoked',
  'closed',
] as const;

export type PartitionState = (typeof PARTITION_STATES)[number];

/** The allowed moves: from a state (key) to any of its list. */
export const PARTITION_TRANSITIONS: TransitionTable<PartitionState> = {
  assigned: ['restoring', 'revoked', 'closed'],
  restoring: ['running', 'revoked', 'closed'],
  running: ['resyncing', 'revoked', 'closed'],
  resyncing: ['running', 'revoked', 'closed'],
  revoked: [],
  closed: [],
};

export function canTransition(from: PartitionState, to: PartitionState): boolean {
  return allows(PARTITION_TRANSITIONS, from, to);
}

/** A move the table does not allow: the processor's own bookkeeping is wrong. */
export class IllegalPartitionTransitionError extends IllegalTransitionError<PartitionState> {
  constructor(
    readonly partition: number,
    from: PartitionState,
    to: PartitionState,
  ) {
    super('ILLEGAL_PARTITION_TRANSITION', `partition ${partition}`, from, to);
  }
}

/** One partition's current state; every change goes through `to`, which checks the table. */
export class PartitionLifecycle extends Lifecycle<PartitionState> {
  constructor(
    readonly partition: number,
    /** Told of every transition (logging, tests). */
    onTransition?: (from: PartitionState, to: PartitionState) => void,
  ) {
    super(
      PARTITION_TRANSITIONS,
      'assigned',
      (from, to) => new IllegalPartitionTransitionError(partition, from, to),
      onTransition,
    );
  }

  /** Revoked or closed: nothing may touch the partition's consumer position any more. */
  get ended(): boolean {
    return this.terminal;
  }
}
