/**
 * Checks of the fuzz target that do not trust the code they check: the bounds of contract §3
 * restated from the contract (not imported from src/schema/bounds.ts), and the §4a limit on a
 * state's range sets.
 */
import type { SessionState } from '../../src/engine';
import type { EngineInput } from '../../src/engine/step';
import type { PerUnit } from '../../src/engine/state';

const MAX_DEPTH = 32;
const MAX_INTEGER = 2 ** 52 - 1;
const MAX_PINS = 16;
const MAX_RANGES = 128;
/** Bytes in UTF-8 by field name (contract §3); any other string is an enum symbol or `type`. */
const STRING_BYTES: Readonly<Record<string, number>> = {
  sessionId: 256,
  eventId: 256,
  requestId: 256,
  keyId: 256,
  spillRequestId: 1024,
  by: 4096,
  reason: 4096,
  error: 4096,
  handle: 4096,
  value: 4096,
};
const OTHER_STRING_BYTES = 64;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a decoded event (or an answered malformed request) is outside the bounds, or null. */
export function boundsViolation(input: EngineInput): string | null {
  // An explicit stack: the value came from the decoder, which must already have refused depth.
  const stack: { value: unknown; field: string; depth: number }[] = [
    { value: input, field: '', depth: 1 },
  ];
  while (stack.length > 0) {
    const { value, field, depth } = stack.pop()!;
    if (typeof value === 'string') {
      // A malformed request's `error` is the decoder's own message, not input: no bound on it.
      if (input.type === 'MalformedRequest' && field === 'error') continue;
      const limit = STRING_BYTES[field] ?? OTHER_STRING_BYTES;
      if (Buffer.byteLength(value) > limit) return `with ${field} over ${limit} bytes`;
      if (LONE_SURROGATE.test(value)) return `with an unpaired surrogate in ${field}`;
    } else if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0 || value > MAX_INTEGER) {
        return `with ${field} = ${value}, not an integer in [0, 2^52 − 1]`;
      }
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} levels`;
      if (Array.isArray(value)) {
        if (field === 'pins' && value.length > MAX_PINS) return `with ${value.length} pins`;
        for (const item of value) stack.push({ value: item, field, depth: depth + 1 });
      } else {
        for (const [k, v] of Object.entries(value))
          stack.push({ value: v, field: k, depth: depth + 1 });
      }
    } else if (value !== null && typeof value !== 'boolean') {
      return `with ${field} of type ${typeof value}`;
    }
  }
  return null;
}

function over(name: string, set: readonly number[]): string | null {
  return set.length / 2 > MAX_RANGES ? `${name} holds ${set.length / 2} ranges` : null;
}

function overPerUnit(name: string, sets: PerUnit): string | null {
  for (const [unit, set] of Object.entries(sets)) {
    const found = over(`${name} (${unit})`, set);
    if (found !== null) return found;
  }
  return null;
}

/** A range set of the state over 128 ranges (contract §4a), or null. */
export function setOverLimit(s: SessionState): string | null {
  return (
    over('pins', s.pins) ??
    over('T', s.truncated) ??
    over('S', s.summary) ??
    over('A0', s.ackPermanent) ??
    overPerUnit('P', s.spilled) ??
    overPerUnit('A1', s.ackOnce) ??
    overPerUnit('X', s.unspillable) ??
    overPerUnit('K', s.coarsened)
  );
}
