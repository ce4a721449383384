/**
 * A lifecycle as named states and a table of allowed moves, the one shape of the client's
 * (src/client/lifecycle.ts) and of each assigned partition's (src/kafka/partitionLifecycle.ts).
 * Every change goes through `to`, which checks the table: any other move is a bug in its
 * owner's bookkeeping, not an operational failure (so not a code of src/errors.ts), and throws
 * an IllegalTransitionError, leaving the state where it was.
 */

/** The allowed moves: from a state (key) to any of its list; a state with none is terminal. */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

export function allows<S extends string>(table: TransitionTable<S>, from: S, to: S): boolean {
  return table[from].includes(to);
}

/** A move the table does not allow, in the lifecycle named `machine`. */
export class IllegalTransitionError<S extends string = string> extends Error {
  constructor(
    /** What kind of lifecycle refused it, for code that tells them apart. */
    readonly code: string,
    readonly machine: string,
    readonly from: S,
    readonly to: S,
  ) {
    super(`${machine}: illegal lifecycle transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** One lifecycle's current state. */
export class Lifecycle<S extends string> {
  private current: S;

  constructor(
    private readonly table: TransitionTable<S>,
    initial: S,
    /** The error of a refused move (its owner's subclass of IllegalTransitionError). */
    private readonly illegal: (from: S, to: S) => IllegalTransitionError<S>,
    /** Told of every transition (logging, tests); never of a refused one. */
    private readonly onTransition?: (from: S, to: S) => void,
  ) {
    this.current = initial;
  }

  get state(): S {
    return this.current;
  }

  /** No move leaves the current state. */
  get terminal(): boolean {
    return this.table[this.current].length === 0;
  }

  to(next: S): void {
    const from = this.current;
    if (!allows(this.table, from, next)) throw this.illegal(from, next);
    this.current = next;
    this.onTransition?.(from, next);
  }
}
