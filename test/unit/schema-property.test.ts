/** Properties of the decoders over arbitrary events: every valid event survives JSON and Avro
 * unchanged, defaults and unknown fields do not matter, and no input makes a decoder throw
 * (contract §3: "Malformed input is a dead letter (§6), never a crash"). */
import fc from 'fast-check';
import { EVENT_TYPES } from '../../src/engine/events';
import type { ContextEvent, EventType, Span } from '../../src/engine/events';
import { decodeEventAvro, decodeEventJson, encodeEventAvro } from '../../src/schema/decodeEvent';

/** The largest long avsc encodes exactly. */
/** The largest integer of contract §3's bounds: 2^52 − 1. */
const MAX_LONG = 4_503_599_627_370_495;
const position = fc.oneof(fc.nat(10_000), fc.integer({ min: 0, max: MAX_LONG }));
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const unit = fc.constantFrom('TURNS', 'TOKENS', 'MESSAGES' as const);
const span: fc.Arbitrary<Span> = fc
  .tuple(position, position)
  .map(([a, b]) => ({ start: Math.min(a, b), end: Math.max(a, b) }));
const nonEmptySpan: fc.Arbitrary<Span> = fc
  .integer({ min: 0, max: MAX_LONG - 1 })
  .chain((start) => fc.integer({ min: start + 1, max: MAX_LONG }).map((end) => ({ start, end })));

function event<T extends EventType, F extends object>(type: T, fields: fc.Arbitrary<F>) {
  const envelope = fc.record({
    sessionId: text,
    seq: position,
    eventId: text,
    occurredAt: position,
  });
  return fc.tuple(envelope, fields).map(([e, f]) => ({ type, ...e, ...f }));
}

const policy = fc.record({
  windowTokens: position,
  triggerTokens: position,
  ceilingTokens: position,
  floor: fc.record({ unit, span: position }),
  truncatorUnit: unit,
  coverage: fc.constantFrom('STRICT', 'PINNED' as const),
  spill: fc.constantFrom('ENABLED', 'DISABLED' as const),
});
const pin = fc.constantFrom('CONSTRAINT', 'PLAN', 'COMMITMENT', 'OPEN_TOOL_CALL' as const);
const role = fc.constantFrom('SYSTEM', 'USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT' as const);
const reason = fc.constantFrom('BUDGET_ENFORCEMENT', 'MANUAL', 'SUMMARY_EVICTED' as const);
const signature = fc.option(fc.record({ keyId: text, expiresAt: position, value: text }), {
  nil: null,
});
const compaction = { requestId: text, unit, summaryInput: span, tailStart: position };

const anyEvent: fc.Arbitrary<ContextEvent> = fc.oneof(
  event('SessionOpened', fc.record({ policy })),
  event(
    'TurnAppended',
    fc.record({
      turn: position,
      tokens: nonEmptySpan,
      messages: nonEmptySpan,
      role,
      pins: fc.array(pin, { maxLength: 4 }),
    }),
  ),
  event('Truncated', fc.record({ unit, range: span, reason })),
  event(
    'CompactionRequested',
    fc.record({ ...compaction, occupancyTokens: fc.option(position, { nil: null }) }),
  ),
  event('CompactionCommitted', fc.record(compaction)),
  event(
    'SpillCompleted',
    fc.record({ spillRequestId: text, handle: text, unit, range: span, signature }),
  ),
  event('SpillFailed', fc.record({ spillRequestId: text, error: text, signature })),
  event('LossAcknowledged', fc.record({ unit, range: span, by: text, reason: text, signature })),
  event('SessionClosed', fc.constant({})),
);

/** contract §3's defaults: a field holding its default may be left out. */
const DEFAULTS: Record<string, unknown> = {
  pins: [],
  reason: 'BUDGET_ENFORCEMENT',
  occupancyTokens: null,
};

function withoutDefaults(e: ContextEvent): Record<string, unknown> {
  const json = JSON.parse(JSON.stringify(e)) as Record<string, unknown>;
  for (const [field, value] of Object.entries(DEFAULTS)) {
    if (JSON.stringify(json[field]) === JSON.stringify(value)) delete json[field];
  }
  if (e.type === 'SessionOpened') {
    const p = json.policy as Record<string, unknown>;
    if (p.coverage === 'STRICT') delete p.coverage;
    if (p.spill === 'ENABLED') delete p.spill;
  }
  return json;
}

describe('properties of valid events', () => {
  it('JSON decode of an event equals the event', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        expect(decodeEventJson(JSON.parse(JSON.stringify(e)))).toEqual({ ok: true, event: e });
      }),
    );
  });

  it('Avro encode → decode of an event equals the event', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        expect(decodeEventAvro(encodeEventAvro(e))).toEqual({ ok: true, event: e });
      }),
    );
  });

  it('leaving out fields that hold their default decodes to the same event', () => {
    fc.assert(
      fc.property(anyEvent, (e) => {
        expect(decodeEventJson(withoutDefaults(e))).toEqual({ ok: true, event: e });
      }),
    );
  });

  it('fields the schema does not declare change nothing', () => {
    const extra = fc.dictionary(
      text.map((k) => `x_${k}`),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(anyEvent, extra, (e, more) => {
        const json = { ...more, ...(JSON.parse(JSON.stringify(e)) as object) };
        expect(decodeEventJson(json)).toEqual({ ok: true, event: e });
      }),
    );
  });
});

describe('no input makes a decoder throw', () => {
  it('decodeEventJson on any JSON value, and on objects with a known type', () => {
    const typed = fc
      .tuple(fc.constantFrom(...EVENT_TYPES), fc.dictionary(text, fc.jsonValue()))
      .map(([type, rest]) => ({ ...rest, type }));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), typed), (value) => {
        const result = decodeEventJson(value);
        // What it accepts is a valid event: Avro can carry it.
        if (result.ok) expect(() => encodeEventAvro(result.event)).not.toThrow();
      }),
    );
  });

  it('decodeEventAvro on arbitrary bytes and on corrupted valid bodies', () => {
    const corrupted = fc
      .tuple(anyEvent, fc.nat(), fc.integer({ min: 0, max: 255 }))
      .map(([e, at, byte]) => {
        const body = encodeEventAvro(e);
        body[at % body.length] = byte;
        return body;
      });
    const bytes = fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a));
    fc.assert(
      fc.property(fc.oneof(bytes, corrupted), (body) => {
        const result = decodeEventAvro(body);
        if (result.ok) expect(() => encodeEventAvro(result.event)).not.toThrow();
      }),
    );
  });
});
