/** The one-pass conformer (validate.ts `compileConformer`) that the decoders try first must agree
 * with the precise path it short-cuts (`conform`, then `findFirstError` with the input bounds):
 * whatever it accepts, the precise path accepts as the same value; every valid event it accepts
 * (else the hot path would be the slow one). The decoders' answers themselves are pinned by the
 * other schema tests. */
import fc from 'fast-check';
import { EVENT_TYPES } from '../../src/engine/events';
import type { ContextEvent, EventType } from '../../src/engine/events';
import {
  EVENT_LIMITS,
  decodeEventAvro,
  decodeEventJson,
  encodeEventAvro,
} from '../../src/schema/decodeEvent';
import { MAX_INTEGER } from '../../src/schema/bounds';
import { eventRecordType, eventUnionType, unwrapEvent } from '../../src/schema/schemas';
import { REJECTED, compileConformer, conform, findFirstError } from '../../src/schema/validate';
import { generateFleetArray } from '../../src/sim';
import { SAMPLES } from './schema-fixtures';

/** The conformer leaves the empty-turn rule to its caller; the rest it must agree on. */
const LIMITS = { ...EVENT_LIMITS, afterField: undefined };

/** The precise path on one record: its conformed value, or the first error. */
function precise(type: EventType, value: unknown): { ok: true; value: unknown } | { ok: false } {
  const recordType = eventRecordType(type);
  const conformed = conform(recordType, value);
  const error = findFirstError(recordType, conformed, LIMITS);
  return error ? { ok: false } : { ok: true, value: conformed };
}

function expectAgreement(type: EventType, value: unknown): void {
  const fast = compileConformer(eventRecordType(type), LIMITS)(value);
  const slow = precise(type, value);
  if (fast === REJECTED) {
    // Rejected: the precise path must find a problem (these schemas use no type the
    // conformer leaves to the precise path).
    expect(slow).toEqual({ ok: false });
    return;
  }
  expect(slow.ok).toBe(true);
  if (!slow.ok) return;
  // Same value, same key order, +0 for -0 (toEqual tells -0 from 0), and a copy of the input.
  expect(fast).toEqual(slow.value);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.value));
  if (typeof value === 'object' && value !== null) expect(fast).not.toBe(value);
}

const fleet = generateFleetArray({ sessions: 20, events: 400, seed: 7, faultyShare: 0.5 }).events;

/** Valid inputs to start from: every sample (minimal and full) and a small simulated fleet. */
const bases: Record<string, unknown>[] = [
  ...EVENT_TYPES.flatMap((t) => [SAMPLES[t].minimal, SAMPLES[t].decoded as object]),
  ...fleet,
].map((e) => structuredClone(e) as Record<string, unknown>);

/** Values the schema checks care about: edges of longs, enum look-alikes, wrong kinds. */
const tricky = fc.constantFrom<unknown>(
  0,
  -0,
  1,
  -1,
  1.5,
  MAX_INTEGER,
  MAX_INTEGER + 1,
  9_007_199_254_740_990,
  2 ** 53,
  -MAX_INTEGER,
  'x'.repeat(256),
  'x'.repeat(257),
  'é'.repeat(128),
  'é'.repeat(129),
  'x'.repeat(1025),
  'x'.repeat(4097),
  Array.from({ length: 16 }, () => 'PLAN'),
  Array.from({ length: 17 }, () => 'PLAN'),
  { keyId: 'k', expiresAt: 5, value: 'v' },
  { keyId: 'k', expiresAt: -5, value: 'v' },
  Infinity,
  -Infinity,
  NaN,
  null,
  undefined,
  true,
  '',
  '12',
  'TURNS',
  'STRICT',
  'PINNED',
  'PLAN',
  'WISH',
  'USER',
  'MANUAL',
  'constructor',
  '__proto__',
  'toString',
  [],
  ['PLAN'],
  ['PLAN', 'WISH'],
  ['constructor'],
  [null],
  {},
  { start: 0, end: 1 },
  { start: 5, end: 5 },
  { start: 9, end: 3 },
  { start: -0, end: 0 },
  { start: 0, end: '1' },
  { unit: 'TURNS', span: 3 },
  // No string conversion survives these (avsc's enum check converts its value to a key).
  { toString: null },
  [{ toString: null }],
);
const anyValue = fc.oneof(tricky, fc.jsonValue());

/** Every path to a field or array item of a JSON-like value. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null) return [];
  const out: string[][] = [];
  for (const key of Object.keys(value)) {
    out.push([...prefix, key]);
    out.push(...paths((value as Record<string, unknown>)[key], [...prefix, key]));
  }
  return out;
}

type Mutation = { at: number; action: 'delete' | 'set' | 'add'; value: unknown; key: string };

function mutate(base: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  const copy = structuredClone(base);
  for (const { value: shared, ...m } of mutations) {
    // The pool's objects are shared between runs: a copy each time (no cycles, no leaks).
    const value: unknown = structuredClone(shared);
    const all = paths(copy);
    const path = all.length === 0 ? [] : all[m.at % all.length]!;
    let parent: unknown = copy;
    for (const part of path.slice(0, -1)) parent = (parent as Record<string, unknown>)[part];
    if (typeof parent !== 'object' || parent === null) continue;
    const target = parent as Record<string, unknown>;
    const last = path.at(-1);
    if (m.action === 'add' || last === undefined) {
      // An own property even for `__proto__`, as JSON.parse makes it.
      Object.defineProperty(target, m.key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if (m.action === 'delete') {
      delete target[last];
    } else {
      target[last] = value;
    }
  }
  return copy;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  action: fc.constantFrom('delete', 'set', 'set', 'add'),
  value: anyValue,
  key: fc.constantFrom('extra', '__proto__', 'start', 'end', 'pins', 'coverage', 'seq'),
});

const mutated = fc
  .tuple(fc.nat(bases.length - 1), fc.array(mutation, { minLength: 1, maxLength: 3 }))
  .map(([i, ms]) => mutate(bases[i]!, ms));

describe('the one-pass conformer agrees with the precise path', () => {
  it('accepts every valid event as the precise path conforms it', () => {
    for (const base of bases) expectAgreement(base.type as EventType, base);
    for (const e of fleet) {
      const fast = compileConformer(eventRecordType(e.type), LIMITS)(JSON.parse(JSON.stringify(e)));
      expect(fast).toEqual(e);
    }
  });

  it('on mutated events, under their own type and every other', () => {
    fc.assert(
      fc.property(mutated, fc.constantFrom(...EVENT_TYPES), (value, other) => {
        const own = value.type;
        if (typeof own === 'string' && (EVENT_TYPES as readonly string[]).includes(own)) {
          expectAgreement(own as EventType, value);
        }
        expectAgreement(other, value);
        // What a JSON line of it decodes to (no -0, NaN or undefined left).
        const line = JSON.stringify(value);
        if (line !== undefined) expectAgreement(other, JSON.parse(line));
      }),
      { numRuns: 2000 },
    );
  }, 60_000);

  it('on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(...EVENT_TYPES), (value, type) => {
        expectAgreement(type, value);
      }),
    );
  });

  it('ignores inherited fields, as the precise path does', () => {
    const { seq: _seq, ...rest } = SAMPLES.SessionClosed.minimal;
    const inherits = Object.assign(Object.create({ seq: 3 }) as object, rest);
    expectAgreement('SessionClosed', inherits);
    expect(decodeEventJson(inherits)).toMatchObject({ ok: false, error: { field: 'seq' } });
    const pinsInherited = Object.assign(
      Object.create({ pins: ['WISH'] }) as object,
      SAMPLES.TurnAppended.minimal,
    );
    expectAgreement('TurnAppended', pinsInherited);
  });

  it('does not share a default array between events', () => {
    const a = decodeEventJson(structuredClone(SAMPLES.TurnAppended.minimal));
    const b = decodeEventJson(structuredClone(SAMPLES.TurnAppended.minimal));
    if (!a.ok || !b.ok || a.event.type !== 'TurnAppended' || b.event.type !== 'TurnAppended')
      throw new Error('expected two TurnAppended');
    expect(a.event.pins).toEqual([]);
    expect(a.event.pins).not.toBe(b.event.pins);
  });

  it('on Avro records as avsc reads them (record instances), and decodeEventAvro agrees', () => {
    for (const e of [...fleet, ...EVENT_TYPES.map((t) => SAMPLES[t].decoded as ContextEvent)]) {
      const body = encodeEventAvro(e);
      const { branch, record } = unwrapEvent(eventUnionType.fromBuffer(body));
      expectAgreement(branch as EventType, record);
      expect(decodeEventAvro(body)).toEqual({ ok: true, event: e });
    }
  });
});
