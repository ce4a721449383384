/** Argument checks of the client: bad use is refused with the field and what was expected. */
import type { ContextEvent, Span, Unit } from '../engine/events';
import { decodeEventJson } from '../schema/decodeEvent';
import { GuardUsageError } from './errors';

const UNITS: readonly Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];

/** A size of a turn in some unit: an integer > 0 (contract §3: no turn is empty in any unit). */
export function requireSize(field: string, n: unknown, min = 1): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min)
    throw new GuardUsageError(
      field,
      `expected an integer ≥ ${min}${min === 1 ? ' (a turn is never empty in any unit)' : ''}, got ${n === undefined ? 'nothing' : JSON.stringify(n)}`,
    );
}

export function requireUnit(field: string, u: unknown): asserts u is Unit {
  if (!UNITS.includes(u as Unit))
    throw new GuardUsageError(
      field,
      `expected one of ${UNITS.join(', ')}, got ${JSON.stringify(u)}`,
    );
}

/** `0 ≤ start ≤ end ≤ head`. */
export function requireRange(field: string, r: Span | undefined, head: number): void {
  if (typeof r !== 'object' || r === null)
    throw new GuardUsageError(field, 'expected {start, end}');
  for (const k of ['start', 'end'] as const) {
    if (!Number.isSafeInteger(r[k]) || r[k] < 0)
      throw new GuardUsageError(
        `${field}.${k}`,
        `expected an integer ≥ 0, got ${JSON.stringify(r[k])}`,
      );
  }
  if (r.end < r.start) throw new GuardUsageError(field, `end ${r.end} is before start ${r.start}`);
  if (r.end > head)
    throw new GuardUsageError(
      `${field}.end`,
      `${r.end} lies beyond the head (${head}): positions not appended yet`,
    );
}

export function requireTurn(field: string, turn: number, turns: number): void {
  if (!Number.isSafeInteger(turn) || turn < 0 || turn >= turns)
    throw new GuardUsageError(field, `expected a turn in [0, ${turns}), got ${String(turn)}`);
}

/**
 * The event as the processor will decode it (src/schema/decodeEvent.ts): one it would reject as
 * malformed is bad use, refused here so that nothing is sent. Returns the event.
 */
export function requireDecodable<E extends ContextEvent>(event: E): E {
  const checked = decodeEventJson(event);
  if (!checked.ok)
    throw new GuardUsageError(checked.error.field ?? event.type, checked.error.message);
  return event;
}
