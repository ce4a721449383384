/**
 * The fuzz target's own checks can fail: each oracle names a value outside the bounds, a state
 * over the range limit, and the runner's shared copy of a case reads back what was written.
 */
import { emptyState } from '../../src/engine';
import type { ContextEvent } from '../../src/engine/events';
import { boundsViolation, setOverLimit } from '../fuzz/oracles';
import { newShared, readCase, writeCase } from '../fuzz/shared';
import { SEED_POLICY, SessionBuilder } from '../support/sessionBuilder';

const turn = new SessionBuilder('s').open(SEED_POLICY).turn(10, 'USER', ['CONSTRAINT']).last;
const withField = (patch: Record<string, unknown>) => ({ ...turn, ...patch }) as ContextEvent;

describe('boundsViolation', () => {
  test('passes an event within the bounds', () => {
    expect(boundsViolation(turn)).toBeNull();
  });

  test.each([
    ['a sessionId of 257 bytes', { sessionId: 'x'.repeat(257) }, 'sessionId over 256 bytes'],
    ['a sessionId of 129 two-byte characters', { sessionId: 'é'.repeat(129) }, 'over 256 bytes'],
    ['an unpaired surrogate', { eventId: 'a\uD800b' }, 'unpaired surrogate in eventId'],
    ['turn 2^52', { turn: 2 ** 52 }, 'turn = 4503599627370496'],
    ['a negative seq', { seq: -1 }, 'seq = -1'],
    ['a fractional number', { occurredAt: 0.5 }, 'occurredAt = 0.5'],
    ['17 pins', { pins: Array(17).fill('PLAN') }, '17 pins'],
  ])('names %s', (_what, patch, found) => {
    expect(boundsViolation(withField(patch))).toContain(found);
  });

  test('names nesting deeper than 32 levels', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(boundsViolation(withField({ extra: deep }))).toContain('deeper than 32');
  });
});

describe('setOverLimit', () => {
  const ranges = (n: number) => Array.from({ length: n }, (_, i) => [2 * i, 2 * i + 1]).flat();

  test('passes 128 ranges and names 129', () => {
    expect(setOverLimit({ ...emptyState(), pins: ranges(128) })).toBeNull();
    expect(setOverLimit({ ...emptyState(), pins: ranges(129) })).toBe('pins holds 129 ranges');
  });

  test('looks into the per-unit sets, K included', () => {
    const s = { ...emptyState(), coarsened: { TOKENS: ranges(200) } };
    expect(setOverLimit(s)).toBe('K (TOKENS) holds 200 ranges');
  });
});

test('a case written to the shared buffer reads back the same', () => {
  const shared = newShared();
  const view = { counters: new Float64Array(shared.counters), bytes: new Uint8Array(shared.bytes) };
  const c = {
    ring: true,
    records: [
      { key: Buffer.from('s1'), value: Buffer.from('{"type":"x"}') },
      { key: null, value: Buffer.alloc(0) },
      { key: Buffer.from([0xff]), value: null },
    ],
  };
  writeCase(view, c);
  expect(readCase(view)).toEqual(c);
});
