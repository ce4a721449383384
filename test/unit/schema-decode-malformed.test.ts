/** contract §3: each class of malformed input is a precise error (code, field, message), never a
 * throw. */
import { decodeEventJson, decodeEventLine } from '../../src/schema/decodeEvent';
import type { DecodeResult } from '../../src/schema/decodeEvent';
import type { DecodeError } from '../../src/schema/errors';
import { withFields } from './schema-fixtures';

/** `object` with `field` a getter that throws `error` (an event the client may be handed). */
function throwingOn<T extends object>(object: T, field: string, error: Error): T {
  return Object.defineProperty(object, field, {
    enumerable: true,
    get: () => {
      throw error;
    },
  });
}

function errorOf(result: DecodeResult): DecodeError {
  if (result.ok) throw new Error(`expected a decode error, got ${JSON.stringify(result.event)}`);
  return result.error;
}

describe('not an object, not JSON', () => {
  it.each([
    ['an array', [1, 2]],
    ['null', null],
    ['a string', 'TurnAppended'],
    ['a number', 42],
  ])('rejects %s as NOT_AN_OBJECT', (_what, value) => {
    expect(errorOf(decodeEventJson(value))).toMatchObject({ code: 'NOT_AN_OBJECT' });
  });

  it('rejects a line that is not JSON as NOT_JSON', () => {
    expect(errorOf(decodeEventLine('{"type": "TurnAppended",'))).toMatchObject({
      code: 'NOT_JSON',
    });
  });

  it('rejects a JSON line holding an array as NOT_AN_OBJECT', () => {
    expect(errorOf(decodeEventLine('[]'))).toMatchObject({ code: 'NOT_AN_OBJECT' });
  });
});

describe('type is checked before any other field', () => {
  it('reports an unknown type even when every other field is wrong too', () => {
    const error = errorOf(decodeEventJson({ type: 'TurnDeleted', seq: 'x', sessionId: 3 }));
    expect(error).toEqual({
      code: 'UNKNOWN_TYPE',
      field: 'type',
      message: 'field "type": unknown event type "TurnDeleted"',
    });
  });

  it('reports a missing type as MISSING_FIELD "type"', () => {
    expect(errorOf(decodeEventJson({ seq: -1 }))).toMatchObject({
      code: 'MISSING_FIELD',
      field: 'type',
    });
  });

  it('reports a non-string type as WRONG_TYPE "type"', () => {
    expect(errorOf(decodeEventJson({ type: 7 }))).toMatchObject({
      code: 'WRONG_TYPE',
      field: 'type',
    });
  });

  it('does not take an inherited property name for an event type', () => {
    expect(errorOf(decodeEventJson({ type: 'constructor' }))).toMatchObject({
      code: 'UNKNOWN_TYPE',
    });
  });
});

describe('fields against the Avro record', () => {
  it('names a missing required field and its type', () => {
    const error = errorOf(decodeEventJson(withFields('TurnAppended', { role: undefined })));
    expect(error).toEqual({
      code: 'MISSING_FIELD',
      field: 'role',
      message:
        'field "role": required field is missing (expected one of SYSTEM, USER, ASSISTANT, TOOL_CALL, TOOL_RESULT)',
    });
  });

  it('names a missing nested field by its path', () => {
    const floor = { unit: 'TURNS' };
    const policy = {
      windowTokens: 1,
      triggerTokens: 1,
      ceilingTokens: 2,
      floor,
      truncatorUnit: 'TURNS',
    };
    const error = errorOf(decodeEventJson(withFields('SessionOpened', { policy })));
    expect(error).toMatchObject({ code: 'MISSING_FIELD', field: 'policy.floor.span' });
  });

  it('says what was expected and what was found for a wrong type', () => {
    const error = errorOf(
      decodeEventJson(withFields('TurnAppended', { tokens: { start: 0, end: '12' } })),
    );
    expect(error).toEqual({
      code: 'WRONG_TYPE',
      field: 'tokens.end',
      message: 'field "tokens.end": expected long, got "12"',
    });
  });

  it('rejects null where the field is not nullable, even with a default', () => {
    const error = errorOf(decodeEventJson(withFields('TurnAppended', { pins: null })));
    expect(error).toMatchObject({ code: 'WRONG_TYPE', field: 'pins' });
    expect(error.message).toContain('expected an array of Pin, got null');
  });

  it('rejects a string occupancyTokens, saying null or long was expected', () => {
    const error = errorOf(
      decodeEventJson(withFields('CompactionRequested', { occupancyTokens: '5' })),
    );
    expect(error).toMatchObject({ code: 'WRONG_TYPE', field: 'occupancyTokens' });
    expect(error.message).toContain('expected null or long');
  });

  it('rejects a record given as a scalar', () => {
    const error = errorOf(decodeEventJson(withFields('Truncated', { range: 5 })));
    expect(error).toMatchObject({ code: 'WRONG_TYPE', field: 'range' });
    expect(error.message).toContain('expected an object (Span), got 5');
  });

  it('lists the allowed symbols for an enum value outside its list', () => {
    const error = errorOf(decodeEventJson(withFields('Truncated', { unit: 'LINES' })));
    expect(error).toEqual({
      code: 'BAD_ENUM',
      field: 'unit',
      message: 'field "unit": expected one of TURNS, TOKENS, MESSAGES, got "LINES"',
    });
  });

  it('names the array index of a bad pin', () => {
    const error = errorOf(decodeEventJson(withFields('TurnAppended', { pins: ['PLAN', 'WISH'] })));
    expect(error).toMatchObject({ code: 'BAD_ENUM', field: 'pins[1]' });
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'rejects the inherited property name %j as an enum symbol',
    (symbol) => {
      const error = errorOf(decodeEventJson(withFields('Truncated', { reason: symbol })));
      expect(error).toMatchObject({ code: 'BAD_ENUM', field: 'reason' });
    },
  );

  // avsc looks an enum value up as a property key; these objects cannot become one (a CI run's
  // fast-check counterexample: a TurnAppended whose role was {"toString":null}).
  it.each([
    ['role', '{"toString":null}', 'an object'],
    ['role', '{"toString":1,"valueOf":1}', 'an object'],
    ['role', '[{"toString":null}]', 'an array'],
    ['pins', '["PLAN",{"toString":null}]', 'an object'],
  ])('rejects %s %s, which no string conversion survives, as WRONG_TYPE', (name, json, what) => {
    const line = JSON.stringify(withFields('TurnAppended', { [name]: '@' })).replace('"@"', json);
    const error = errorOf(decodeEventLine(line));
    const field = name === 'pins' ? 'pins[1]' : name;
    expect(error).toMatchObject({ code: 'WRONG_TYPE', field });
    expect(error.message).toContain(`got ${what}`);
  });

  it('still reports the first failing field in schema order past such an object', () => {
    const input = withFields('TurnAppended', { seq: 'one', role: { toString: null } });
    expect(errorOf(decodeEventJson(input))).toMatchObject({ code: 'WRONG_TYPE', field: 'seq' });
  });

  it('dead-letters a value the decoder throws on as DECODER_FAILED, quoting the error', () => {
    // Through the client an event is any object: this one's getter throws.
    const input = throwingOn(
      withFields('TurnAppended', {}),
      'turn',
      new RangeError('getter exploded'),
    );
    const error = errorOf(decodeEventJson(input));
    expect(error.code).toBe('DECODER_FAILED');
    expect(error.message).toContain('RangeError: getter exploded');
  });

  it('still answers a CompactionRequested the decoder throws on, when its identity reads', () => {
    const input = throwingOn(
      withFields('CompactionRequested', {}),
      'summaryInput',
      new Error('no'),
    );
    const result = decodeEventJson(input);
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'DECODER_FAILED' },
      request: { type: 'MalformedRequest', requestId: 'request-1', seq: 3 },
    });
  });

  it('does not accept an unknown symbol for a field with an enum default', () => {
    const error = errorOf(decodeEventJson(withFields('Truncated', { reason: 'OTHER' })));
    expect(error).toMatchObject({ code: 'BAD_ENUM', field: 'reason' });
  });

  it('rejects a long that is a fraction as NOT_AN_INTEGER', () => {
    const error = errorOf(decodeEventJson(withFields('SessionClosed', { seq: 1.5 })));
    expect(error).toMatchObject({ code: 'NOT_AN_INTEGER', field: 'seq' });
  });

  it.each([
    ['2^52, one past the bound', 2 ** 52],
    ['beyond the safe integers', 2 ** 53],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER],
    ['infinite (JSON 1e400)', Infinity],
  ])('rejects a long that is %s as NUMBER_TOO_LARGE', (_what, seq) => {
    const error = errorOf(decodeEventJson(withFields('SessionClosed', { seq })));
    expect(error).toMatchObject({ code: 'NUMBER_TOO_LARGE', field: 'seq' });
  });

  it('reports the first failing field in schema order', () => {
    const input = withFields('TurnAppended', { seq: 'one', role: 'NOBODY' });
    expect(errorOf(decodeEventJson(input))).toMatchObject({ field: 'seq' });
  });
});

describe('semantic rules of contract §3', () => {
  it.each([
    ['SessionClosed', { seq: -1 }, 'seq'],
    ['SessionClosed', { occurredAt: -5 }, 'occurredAt'],
    ['TurnAppended', { turn: -1 }, 'turn'],
    ['TurnAppended', { tokens: { start: -3, end: 4 } }, 'tokens.start'],
    ['Truncated', { range: { start: 2, end: -1 } }, 'range.end'],
    ['CompactionRequested', { tailStart: -1 }, 'tailStart'],
    ['CompactionRequested', { occupancyTokens: -1 }, 'occupancyTokens'],
  ] as const)('rejects a negative number in %s %j naming %s', (type, changes, field) => {
    const error = errorOf(decodeEventJson(withFields(type, changes)));
    expect(error).toMatchObject({ code: 'NEGATIVE_NUMBER', field });
    expect(error.message).toMatch(/expected a non-negative integer, got -\d+/);
  });

  it.each([
    ['policy.windowTokens', { windowTokens: -1 }],
    ['policy.floor.span', { floor: { unit: 'TURNS', span: -12 } }],
  ])('rejects a negative %s inside the policy', (field, changes) => {
    const policy = withFields('SessionOpened', {}).policy as Record<string, unknown>;
    const input = withFields('SessionOpened', { policy: { ...policy, ...changes } });
    expect(errorOf(decodeEventJson(input))).toMatchObject({ code: 'NEGATIVE_NUMBER', field });
  });

  it.each([
    ['Truncated', 'range'],
    ['CompactionRequested', 'summaryInput'],
    ['CompactionCommitted', 'summaryInput'],
    ['SpillCompleted', 'range'],
    ['LossAcknowledged', 'range'],
    ['TurnAppended', 'messages'],
  ] as const)('rejects a reversed range in %s.%s', (type, field) => {
    const error = errorOf(decodeEventJson(withFields(type, { [field]: { start: 9, end: 3 } })));
    expect(error).toEqual({
      code: 'REVERSED_RANGE',
      field,
      message: `field "${field}": range [start, end) must have end >= start, got start 9, end 3`,
    });
  });

  it.each(['tokens', 'messages'])('rejects a TurnAppended that is empty in %s', (unit) => {
    const error = errorOf(
      decodeEventJson(withFields('TurnAppended', { [unit]: { start: 4, end: 4 } })),
    );
    expect(error).toEqual({
      code: 'EMPTY_TURN',
      field: unit,
      message: `field "${unit}": a turn must not be empty, got [4, 4)`,
    });
  });

  it('takes the fields in schema order, each with its first failing check: a negative seq before a bad unit', () => {
    const input = withFields('Truncated', { seq: -1, unit: 'LINES' });
    expect(errorOf(decodeEventJson(input))).toMatchObject({
      code: 'NEGATIVE_NUMBER',
      field: 'seq',
    });
  });
});
