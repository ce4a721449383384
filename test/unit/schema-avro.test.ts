/** Avro form of the input events (contract §3: "Avro in the registry"): roundtrips, and the same
 * rules as the JSON form for bodies that decode but break contract §3. */
import { Type } from 'avsc';
import { EVENT_TYPES } from '../../src/engine/events';
import type { ContextEvent } from '../../src/engine/events';
import { decodeEventAvro, encodeEventAvro } from '../../src/schema/decodeEvent';
import { eventUnionType, parseEventSchema, rawSchemas, wrapEvent } from '../../src/schema/schemas';
import { SAMPLES } from './schema-fixtures';

describe('Avro encode → decode', () => {
  it.each(EVENT_TYPES)('roundtrips a %s to an equal plain event', (type) => {
    const event = SAMPLES[type].decoded;
    const result = decodeEventAvro(encodeEventAvro(event));
    expect(result).toStrictEqual({ ok: true, event });
  });

  it('roundtrips non-default values (pins, occupancy, reason)', () => {
    const events: ContextEvent[] = [
      { ...SAMPLES.TurnAppended.decoded, pins: ['OPEN_TOOL_CALL', 'PLAN'] },
      {
        ...SAMPLES.CompactionRequested.decoded,
        occupancyTokens: 163_000,
      },
      { ...SAMPLES.Truncated.decoded, reason: 'MANUAL' },
    ];
    for (const event of events) {
      expect(decodeEventAvro(encodeEventAvro(event))).toStrictEqual({ ok: true, event });
    }
  });

  it('encodes the union branch named after event.type', () => {
    const body = encodeEventAvro(SAMPLES.SpillFailed.decoded);
    expect(Object.keys(eventUnionType.fromBuffer(body) as object)).toEqual([
      'io.compactionguard.v1.SpillFailed',
    ]);
  });

  it('refuses to encode an invalid event, saying why', () => {
    const bad = { ...SAMPLES.Truncated.decoded, range: { start: 5, end: 1 } } as ContextEvent;
    expect(() => encodeEventAvro(bad)).toThrow('cannot encode Truncated: field "range"');
  });
});

describe('Avro bodies that are malformed', () => {
  it('reports a string whose bytes are not UTF-8 as NOT_UTF8 (as for JSON), naming the byte', () => {
    const body = encodeEventAvro({ ...SAMPLES.SpillFailed.decoded, error: 'ABCD' } as ContextEvent);
    const at = body.indexOf(Buffer.from('ABCD')) + 1;
    const bad = Buffer.from(body);
    bad[at] = 0xff;
    expect(decodeEventAvro(bad)).toEqual({
      ok: false,
      error: {
        code: 'NOT_UTF8',
        message: `a string is not valid UTF-8 (byte offset ${at} of the body)`,
      },
    });
  });

  it('reports a truncated body as AVRO_DECODE', () => {
    const body = encodeEventAvro(SAMPLES.TurnAppended.decoded);
    const result = decodeEventAvro(body.subarray(0, body.length - 2));
    expect(result).toMatchObject({ ok: false, error: { code: 'AVRO_DECODE' } });
  });

  it('reports trailing bytes as AVRO_DECODE', () => {
    const body = Buffer.concat([encodeEventAvro(SAMPLES.SessionClosed.decoded), Buffer.from([0])]);
    expect(decodeEventAvro(body)).toMatchObject({ ok: false, error: { code: 'AVRO_DECODE' } });
  });

  it('reports a union index beyond the nine branches as AVRO_DECODE', () => {
    expect(decodeEventAvro(Buffer.from([2 * 9]))).toMatchObject({
      ok: false,
      error: { code: 'AVRO_DECODE' },
    });
  });

  it('reports a type field that disagrees with the branch as TYPE_MISMATCH', () => {
    const event = { ...SAMPLES.SessionClosed.decoded, type: 'SessionOpened' };
    const body = eventUnionType.toBuffer({ 'io.compactionguard.v1.SessionClosed': event });
    expect(decodeEventAvro(body)).toMatchObject({
      ok: false,
      error: { code: 'TYPE_MISMATCH', field: 'type' },
    });
  });

  it.each([
    ['an empty turn', { tokens: { start: 3, end: 3 } }, 'EMPTY_TURN'],
    ['a reversed range', { messages: { start: 3, end: 1 } }, 'REVERSED_RANGE'],
    ['a negative seq', { seq: -2 }, 'NEGATIVE_NUMBER'],
  ])('applies the rules of contract §3 to %s', (_what, changes, code) => {
    const event = { ...SAMPLES.TurnAppended.decoded, ...changes } as ContextEvent;
    const body = eventUnionType.toBuffer(wrapEvent(event));
    expect(decodeEventAvro(body)).toMatchObject({ ok: false, error: { code } });
  });
});

describe('Avro bodies written with another writer schema', () => {
  it('reads a body written by an older producer whose Truncated had no reason field', () => {
    const older = JSON.parse(rawSchemas.contextChangeEvent) as Array<{
      name: string;
      fields: Array<{ name: string }>;
    }>;
    const truncated = older.find((r) => r.name === 'Truncated');
    if (!truncated) throw new Error('no Truncated record');
    truncated.fields = truncated.fields.filter((f) => f.name !== 'reason');
    const writer = parseEventSchema(JSON.stringify(older)).union;
    const { reason: _reason, ...written } = SAMPLES.Truncated.decoded as { reason: string };
    const body = writer.toBuffer({ 'io.compactionguard.v1.Truncated': written });
    expect(decodeEventAvro(body, writer)).toStrictEqual({
      ok: true,
      event: SAMPLES.Truncated.decoded,
    });
  });

  it('reports a writer schema we cannot read as AVRO_DECODE', () => {
    const foreign = Type.forSchema(
      [{ type: 'record', name: 'io.compactionguard.v1.Other', fields: [] }],
      { wrapUnions: true },
    );
    const body = foreign.toBuffer({ 'io.compactionguard.v1.Other': {} });
    expect(decodeEventAvro(body, foreign)).toMatchObject({
      ok: false,
      error: { code: 'AVRO_DECODE' },
    });
  });
});

describe('Avro bodies built to exhaust memory (contract §8: bad input never stops the processor)', () => {
  /** The TurnAppended sample whose empty pins array (its last byte, 0) claims `count` items. */
  function turnClaimingPins(count: number): Buffer {
    const body = encodeEventAvro(SAMPLES.TurnAppended.decoded);
    const zigzag: number[] = [];
    for (let v = count * 2; ; v = Math.floor(v / 128)) {
      if (v < 0x80) {
        zigzag.push(v);
        break;
      }
      zigzag.push((v % 128) | 0x80);
    }
    return Buffer.concat([body.subarray(0, body.length - 1), Buffer.from(zigzag)]);
  }

  it.each([1e8, 2 ** 32 - 1, 2 ** 40])(
    'refuses an array block claiming %d items at once',
    (count) => {
      // Not a speed claim: without the guard avsc allocates the claimed items (12 s for 1e8, out of memory beyond).
      const started = Date.now();
      const result = decodeEventAvro(turnClaimingPins(count));
      expect(result).toMatchObject({ ok: false, error: { code: 'AVRO_DECODE' } });
      expect(Date.now() - started).toBeLessThan(5000);
    },
  );

  it('refuses it when the body is read through a writer schema too', () => {
    const writer = parseEventSchema(rawSchemas.contextChangeEvent).union;
    const result = decodeEventAvro(turnClaimingPins(2 ** 32 - 1), writer);
    expect(result).toMatchObject({ ok: false, error: { code: 'AVRO_DECODE' } });
  });

  it('still reads pins in several blocks, negative counts included', () => {
    const body = encodeEventAvro(SAMPLES.TurnAppended.decoded);
    // Block of 1 item (zigzag 2) = PLAN (index 1 → 2); block of -1 item with size 1 (zigzag 1, 2)
    // = COMMITMENT (index 2 → 4); end (0).
    const pins = Buffer.from([2, 2, 1, 2, 4, 0]);
    const result = decodeEventAvro(Buffer.concat([body.subarray(0, body.length - 1), pins]));
    expect(result).toMatchObject({ ok: true, event: { pins: ['PLAN', 'COMMITMENT'] } });
  });
});
