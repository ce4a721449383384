/**
 * keepPinned: after a committed summary, the messages whose turns carry a kept pin (CONSTRAINT
 * and PLAN by default) are put back verbatim right after the summary, in their original order,
 * once each. A summary may leave a rule out; a verbatim copy cannot.
 */
import type { Pin } from '../../engine/events';

/** The pins kept verbatim by default: the user's rules and the plan. */
export const DEFAULT_KEPT_PINS: readonly Pin[] = ['CONSTRAINT', 'PLAN'];

/** `keepPinned` as given (default on) → the pins it keeps (none when off). */
export function keptPins(option: boolean | readonly Pin[] | undefined): readonly Pin[] {
  if (option === undefined || option === true) return DEFAULT_KEPT_PINS;
  if (option === false) return [];
  return option;
}

export interface Arrangement<M> {
  /** What follows the summary: the copies of the summarized pinned messages and the copies kept from earlier compactions, in original order. */
  block: M[];
  /** The other kept messages, in the order the model saw them. */
  rest: M[];
  /** Each new copy with the message it copies (to report as new context). */
  copies: { copy: M; of: M }[];
}

export interface ArrangeInput<M> {
  /** The messages the summary replaces. */
  summarized: readonly M[];
  /** The messages kept verbatim, in the order the model saw them. */
  preserved: readonly M[];
  /** Whether a message's turn carries a kept pin (false for a summary). */
  pinned: (m: M) => boolean;
  /** Whether a message is a copy put back by an earlier compaction. */
  inBlock: (m: M) => boolean;
  /** The original order of a message (a copy has its original's). */
  origin: (m: M) => number;
  /** A verbatim copy of `m`. */
  copy: (m: M) => M;
}

/**
 * The context after a summary is `[summary, ...block, ...rest]`. A pinned message is either
 * summarized (then copied once into the block) or kept (then left where it is): never both, so
 * never duplicated, and never dropped.
 */
export function arrangeAfterSummary<M>(input: ArrangeInput<M>): Arrangement<M> {
  const copies = input.summarized
    .filter((m) => input.pinned(m))
    .map((of) => ({ copy: input.copy(of), of }));
  const originOf = new Map<M, number>(copies.map((c) => [c.copy, input.origin(c.of)]));
  const kept = input.preserved.filter((m) => input.inBlock(m));
  for (const m of kept) originOf.set(m, input.origin(m));
  const block = [...kept, ...copies.map((c) => c.copy)].sort(
    (a, b) => originOf.get(a)! - originOf.get(b)!,
  );
  const rest = input.preserved.filter((m) => !input.inBlock(m));
  return { block, rest, copies };
}
