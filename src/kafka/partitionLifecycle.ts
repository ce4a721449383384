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
 * Any other move is a bug and throws `IllegalTransitionError`.
 */

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
export const PARTITION_TRANSITIONS: Readonly<Record<PartitionState, readonly PartitionState[]>> = {
  assigned: ['restoring', 'revoked', 'closed'],
  restoring: ['running', 'revoked', 'closed'],
  running: ['resyncing', 'revoked', 'closed'],
  resyncing: ['running', 'revoked', 'closed'],
  revoked: [],
  closed: [],
};

export function canTransition(from: PartitionState, to: PartitionState): boolean {
  return PARTITION_TRANSITIONS[from].includes(to);
}

/** A move the table does not allow: the processor's own bookkeeping is wrong. */
export class IllegalTransitionError extends Error {
  readonly code = 'ILLEGAL_PARTITION_TRANSITION';

  constructor(
    readonly partition: number,
    readonly from: PartitionState,
    readonly to: PartitionState,
  ) {
    super(`partition ${partition}: illegal lifecycle transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** One partition's current state; every change goes through `to`, which checks the table. */
export class PartitionLifecycle {
  private current: PartitionState = 'assigned';

  constructor(
    readonly partition: number,
    /** Told of every transition (logging, tests). */
    private readonly onTransition?: (from: PartitionState, to: PartitionState) => void,
  ) {}

  get state(): PartitionState {
    return this.current;
  }

  /** Revoked or closed: nothing may touch the partition's consumer position any more. */
  get ended(): boolean {
    return this.current === 'revoked' || this.current === 'closed';
  }

  to(next: PartitionState): void {
    const from = this.current;
    if (!canTransition(from, next)) throw new IllegalTransitionError(this.partition, from, next);
    this.current = next;
    this.onTransition?.(from, next);
  }
}
