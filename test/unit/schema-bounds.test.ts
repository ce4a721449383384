/**
 * contract §3, bounds (rev 11): no single record can exhaust or stop the processor. A record
 * nested more than 32 levels deep is TOO_DEEP (found on the text without recursion), an
 * identifier over 256 bytes, a spillRequestId over 1,024, a free text over 4,096 or more than 16
 * pins is TOO_LONG, an integer over 2^52 − 1 is NUMBER_TOO_LARGE, an unpaired surrogate is
 * NOT_UTF8; and when a record breaks several rules, the first in the contract's order names it.
 */
import type { types } from 'avsc';
import { MAX_INTEGER, STRING_LIMITS, scanJsonText } from '../../src/schema/bounds';
import {
  decodeEventBytes,
  decodeEventJson,
  decodeEventLine,
  type DecodeResult,
} from '../../src/schema/decodeEvent';
import type { DecodeError } from '../../src/schema/errors';
import { eventRecordType } from '../../src/schema/schemas';
import { EVENT_TYPES } from '../../src/engine/events';
import { SAMPLES, withFields } from './schema-fixtures';

function errorOf(result: DecodeResult): DecodeError {
  if (result.ok) throw new Error(`expected a decode error, got ${JSON.stringify(result.event)}`);
  return result.error;
}

const line = (value: unknown) => JSON.stringify(value);

/** A TurnAppended whose unknown field `extra` nests `levels` arrays (the record is level 1). */
function nestedLine(levels: number): string {
  const inner = '['.repeat(levels - 1) + ']'.repeat(levels - 1);
  return line(withFields('TurnAppended', { extra: '@' })).replace('"@"', inner);
}

describe('TOO_DEEP: more than 32 levels, in any field, known or not', () => {
  it('32 levels decode (an unknown field is ignored); 33 are TOO_DEEP, naming where level 33 opens', () => {
    expect(decodeEventLine(nestedLine(32)).ok).toBe(true);
    const error = errorOf(decodeEventLine(nestedLine(33)));
    expect(error.code).toBe('TOO_DEEP');
    expect(error.message).toMatch(
      /more than 32 levels deep: level 33 opens at character offset \d+/,
    );
  });

  it('the poison record: 10 KB nested 5,000 deep is a dead letter, not a stack overflow', () => {
    const poison = '{"type":"TurnAppended","x":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    expect(poison.length).toBeGreaterThan(10_000);
    expect(errorOf(decodeEventBytes(Buffer.from(poison))).code).toBe('TOO_DEEP');
  });

  it('brackets inside strings do not count', () => {
    const deepText = withFields('LossAcknowledged', { reason: '['.repeat(100) });
    expect(decodeEventLine(line(deepText)).ok).toBe(true);
  });

  it('a value handed over in memory is checked the same way, also when it is cyclic', () => {
    let deep: unknown = [];
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(errorOf(decodeEventJson(withFields('TurnAppended', { extra: deep }))).code).toBe(
      'TOO_DEEP',
    );
    const cyclic: Record<string, unknown> = withFields('TurnAppended', {});
    cyclic.self = cyclic;
    expect(errorOf(decodeEventJson(cyclic)).code).toBe('TOO_DEEP');
  });

  it('is checked before JSON: a deep text that does not parse is TOO_DEEP, not NOT_JSON', () => {
    expect(errorOf(decodeEventLine('['.repeat(40))).code).toBe('TOO_DEEP');
  });
});

describe('NOT_UTF8: an unpaired surrogate is not text', () => {
  it.each([
    ['a lone high surrogate escape', '\\ud800'],
    ['a lone low surrogate escape', '\\uDC00'],
    ['a high surrogate followed by a letter', '\\uD800\\u0041'],
    ['a reversed pair', '\\uDC00\\uD800'],
  ])('%s in any field is NOT_UTF8, and a request holding it is not answered', (_what, escape) => {
    const text = line(withFields('CompactionRequested', { requestId: '@' })).replace('@', escape);
    const result = decodeEventLine(text);
    expect(errorOf(result).code).toBe('NOT_UTF8');
    expect(result).not.toHaveProperty('request');
  });

  it('a valid pair decodes, and an escaped backslash before u is no escape', () => {
    const pair = line(withFields('LossAcknowledged', { by: '@' })).replace('@', '\\ud83d\\ude00');
    expect(decodeEventLine(pair)).toMatchObject({ ok: true, event: { by: '😀' } });
    const slash = line(withFields('LossAcknowledged', { by: '@' })).replace('@', '\\\\ud800');
    expect(decodeEventLine(slash)).toMatchObject({ ok: true, event: { by: '\\ud800' } });
  });

  it('in a value handed over in memory (a string or a key)', () => {
    expect(errorOf(decodeEventJson(withFields('LossAcknowledged', { by: 'a\ud800' }))).code).toBe(
      'NOT_UTF8',
    );
    expect(errorOf(decodeEventJson(withFields('LossAcknowledged', { ['\udc00']: 1 }))).code).toBe(
      'NOT_UTF8',
    );
  });
});

describe('TOO_LONG: identifiers, spill request ids, free text, pins', () => {
  it('every string field of the input schema but `type` has a limit', () => {
    const strings = new Set<string>();
    const walk = (t: types.RecordType): void => {
      for (const f of t.fields) {
        const inner = f.type.typeName.startsWith('union')
          ? (f.type as types.UnwrappedUnionType).types.find((x) => x.typeName !== 'null')!
          : f.type;
        if (inner.typeName === 'string') strings.add(f.name);
        if (inner.typeName === 'record') walk(inner as types.RecordType);
      }
    };
    for (const type of EVENT_TYPES) walk(eventRecordType(type));
    strings.delete('type');
    expect(new Set(Object.keys(STRING_LIMITS))).toEqual(strings);
  });

  const signature = (changes: object) => ({
    keyId: 'k',
    expiresAt: 5,
    value: 'v',
    ...changes,
  });

  it.each([
    ['CompactionRequested', 'sessionId', {}, 256],
    ['CompactionRequested', 'eventId', {}, 256],
    ['CompactionRequested', 'requestId', {}, 256],
    ['SpillCompleted', 'spillRequestId', {}, 1024],
    ['SpillCompleted', 'handle', {}, 4096],
    ['SpillFailed', 'error', {}, 4096],
    ['LossAcknowledged', 'by', {}, 4096],
    ['LossAcknowledged', 'reason', {}, 4096],
  ] as const)(
    '%s.%s: %# at the limit decodes, one byte more is TOO_LONG',
    (type, field, _x, limit) => {
      // Two-byte characters: the limit is in UTF-8 bytes, not characters.
      const atLimit = 'é'.repeat(limit / 2);
      expect(decodeEventJson(withFields(type, { [field]: atLimit })).ok).toBe(true);
      const error = errorOf(decodeEventJson(withFields(type, { [field]: `${atLimit}x` })));
      expect(error).toMatchObject({ code: 'TOO_LONG', field });
      expect(error.message).toContain(
        `${limit + 1} bytes in UTF-8, more than the ${limit} allowed`,
      );
    },
  );

  it.each([
    ['keyId', 256],
    ['value', 4096],
  ] as const)('signature.%s: at the limit decodes, one byte more is TOO_LONG', (field, limit) => {
    const ok = signature({ [field]: 'x'.repeat(limit) });
    expect(decodeEventJson(withFields('SpillFailed', { signature: ok })).ok).toBe(true);
    const bad = signature({ [field]: 'x'.repeat(limit + 1) });
    expect(errorOf(decodeEventJson(withFields('SpillFailed', { signature: bad })))).toMatchObject({
      code: 'TOO_LONG',
      field: `signature.${field}`,
    });
  });

  it('16 pins decode; 17 are TOO_LONG before their items are looked at', () => {
    const pins = (n: number) => Array.from({ length: n }, () => 'CONSTRAINT');
    expect(decodeEventJson(withFields('TurnAppended', { pins: pins(16) })).ok).toBe(true);
    const error = errorOf(decodeEventJson(withFields('TurnAppended', { pins: [...pins(16), 9] })));
    expect(error).toMatchObject({ code: 'TOO_LONG', field: 'pins' });
  });

  it('a request whose requestId is over the bound is dead-lettered without an answer (the 540 KB poison)', () => {
    const poison = withFields('CompactionRequested', { requestId: 'r'.repeat(540_000) });
    const result = decodeEventJson(poison);
    expect(errorOf(result).code).toBe('TOO_LONG');
    expect(result).not.toHaveProperty('request');
    const answered = decodeEventJson(
      withFields('CompactionRequested', { requestId: 'r'.repeat(256), unit: 'LINES' }),
    );
    expect(answered).toMatchObject({ ok: false, request: { requestId: 'r'.repeat(256) } });
  });
});

describe('NUMBER_TOO_LARGE: any integer over 2^52 − 1', () => {
  it.each([
    ['TurnAppended', 'turn'],
    ['TurnAppended', 'seq'],
    ['TurnAppended', 'occurredAt'],
    ['Truncated', 'range.end'],
    ['CompactionRequested', 'tailStart'],
    ['CompactionRequested', 'occupancyTokens'],
    ['SessionOpened', 'policy.floor.span'],
    ['SpillFailed', 'signature.expiresAt'],
  ] as const)('%s %s: 2^52 − 1 decodes, 2^52 is NUMBER_TOO_LARGE', (type, field) => {
    const set = (value: number) => {
      const sample = structuredClone(SAMPLES[type].decoded) as unknown as Record<string, unknown>;
      if (field === 'signature.expiresAt')
        sample.signature = { keyId: 'k', expiresAt: 0, value: 'v' };
      const path = field.split('.');
      let at = sample;
      for (const p of path.slice(0, -1)) at = at[p] as Record<string, unknown>;
      at[path[path.length - 1]!] = value;
      return sample;
    };
    const ok = decodeEventJson(set(MAX_INTEGER));
    // A range's start stays below its end only when the end is the largest.
    if (field !== 'range.end') expect(ok.ok).toBe(true);
    expect(errorOf(decodeEventJson(set(MAX_INTEGER + 1)))).toMatchObject({
      code: 'NUMBER_TOO_LARGE',
      field,
    });
  });

  it("the poison: a turn of 9007199254740990 (avsc's long limit) is a dead letter before any state sees it", () => {
    expect(
      errorOf(decodeEventJson(withFields('TurnAppended', { turn: 9_007_199_254_740_990 }))),
    ).toMatchObject({ code: 'NUMBER_TOO_LARGE', field: 'turn' });
  });

  it('a negative signature.expiresAt is NEGATIVE_NUMBER like the others', () => {
    const signature = { keyId: 'k', expiresAt: -1, value: 'v' };
    expect(errorOf(decodeEventJson(withFields('SpillFailed', { signature })))).toMatchObject({
      code: 'NEGATIVE_NUMBER',
      field: 'signature.expiresAt',
    });
  });
});

describe('which error comes first (contract §3)', () => {
  it('not UTF-8 (a surrogate) before too deep', () => {
    const text = nestedLine(40).replace('"eventId":"', '"eventId":"\\ud800');
    expect(scanJsonText(text)?.code).toBe('NOT_UTF8');
    expect(errorOf(decodeEventLine(text)).code).toBe('NOT_UTF8');
  });

  it('too deep before a key twice and before not an object', () => {
    const deepTwice = nestedLine(40).replace('"seq":', '"seq":1,"seq":');
    expect(errorOf(decodeEventLine(deepTwice)).code).toBe('TOO_DEEP');
  });

  it("unknown type before any field, then the common fields before the type's own, signature last", () => {
    expect(errorOf(decodeEventJson({ type: 'Nope', sessionId: 'x'.repeat(300) })).code).toBe(
      'UNKNOWN_TYPE',
    );
    const ack = withFields('LossAcknowledged', {
      eventId: 'x'.repeat(300),
      range: { start: 5, end: 1 },
      signature: { keyId: 'k', expiresAt: -1, value: 'v' },
    });
    expect(errorOf(decodeEventJson(ack))).toMatchObject({ code: 'TOO_LONG', field: 'eventId' });
    const late = withFields('LossAcknowledged', {
      range: { start: 5, end: 1 },
      signature: { keyId: 'k', expiresAt: -1, value: 'v' },
    });
    expect(errorOf(decodeEventJson(late))).toMatchObject({
      code: 'REVERSED_RANGE',
      field: 'range',
    });
    const last = withFields('LossAcknowledged', {
      by: 'x'.repeat(5000),
      signature: { keyId: 'k', expiresAt: -1, value: 'v' },
    });
    expect(errorOf(decodeEventJson(last))).toMatchObject({ code: 'TOO_LONG', field: 'by' });
  });

  it('within a field, the first check it fails: a fraction is NOT_AN_INTEGER, a huge one NUMBER_TOO_LARGE', () => {
    expect(errorOf(decodeEventJson(withFields('TurnAppended', { turn: -0.5 }))).code).toBe(
      'NOT_AN_INTEGER',
    );
    expect(errorOf(decodeEventJson(withFields('TurnAppended', { turn: 1e300 }))).code).toBe(
      'NUMBER_TOO_LARGE',
    );
    expect(errorOf(decodeEventJson(withFields('TurnAppended', { turn: -1e300 }))).code).toBe(
      'NEGATIVE_NUMBER',
    );
  });
});
