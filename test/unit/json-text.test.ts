/**
 * What JSON.parse hides (src/schema/jsonText.ts): repeated keys in any object of a record, and
 * invalid UTF-8, both dead letters (contract §3), and seq null/absent only out of band.
 */
import fc from 'fast-check';
import { decodeEventBytes, decodeEventLine } from '../../src/schema/decodeEvent';
import { findDuplicateKeys, firstInvalidUtf8 } from '../../src/schema/jsonText';

/** A JSON value written by hand, so that an object may repeat a key (JSON.stringify cannot). */
type Tree = number | string | Tree[] | { entries: [string, Tree][] };

const keyArb = fc.constantFrom('a', 'b', 'c', '\\u0061', 'a\\"b', 'x\\\\', '{', '[');

const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer(),
    fc.constantFrom('"{"', '"}"', '"[,]"', '"\\""', '":"', '"\\\\"'),
    fc.array(tie('tree'), { maxLength: 3 }),
    fc.record({ entries: fc.array(fc.tuple(keyArb, tie('tree')), { maxLength: 4 }) }),
  ),
})).tree;

function write(t: Tree): string {
  if (typeof t === 'number') return String(t);
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return `[${t.map(write).join(' , ')}]`;
  return `{ ${t.entries.map(([k, v]) => `"${k}" : ${write(v)}`).join(',')} }`;
}

/** The obvious reading: does any object, by its keys as JSON reads them, repeat one? */
function repeats(t: Tree): boolean {
  if (typeof t !== 'object') return false;
  if (Array.isArray(t)) return t.some(repeats);
  const keys = t.entries.map(([k]) => JSON.parse(`"${k}"`) as string);
  return new Set(keys).size !== keys.length || t.entries.some(([, v]) => repeats(v));
}

describe('findDuplicateKeys', () => {
  it('finds a repeated key exactly when some object repeats one, at any depth, escapes resolved', () => {
    fc.assert(
      fc.property(treeArb, (t) => {
        const text = write(t);
        const found = findDuplicateKeys(text, JSON.parse(text));
        expect(found.length > 0).toBe(repeats(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('names the key, where it repeats and how deep', () => {
    const text = '{"a":1,"o":{"b":[{"k":1}],"b":2},"\\u0061":3}';
    expect(findDuplicateKeys(text, JSON.parse(text))).toEqual([
      { key: 'b', offset: text.indexOf('"b":2'), depth: 2 },
      { key: 'a', offset: text.indexOf('"\\u0061"'), depth: 1 },
    ]);
  });

  it('a key in another object, or inside a string, is not a repeat', () => {
    const text = '{"a":{"a":1},"s":"\\"a\\":2","l":[{"a":1},{"a":2}]}';
    expect(findDuplicateKeys(text, JSON.parse(text))).toEqual([]);
  });
});

describe('the decoder and repeated keys', () => {
  const turn =
    '{"type":"TurnAppended","sessionId":"s","seq":1,"eventId":"e","occurredAt":1,"turn":0,"tokens":{"start":0,"end":5},"messages":{"start":0,"end":1},"role":"USER","pins":["CONSTRAINT"]}';

  it('a turn whose pins are given twice is DUPLICATE_KEY, whichever value comes last', () => {
    for (const text of [
      turn.replace('"pins":["CONSTRAINT"]', '"pins":["CONSTRAINT"],"pins":[]'),
      turn.replace('"pins":["CONSTRAINT"]', '"pins":[],"pins":["CONSTRAINT"]'),
      turn.replace('"start":0,"end":5', '"start":0,"end":5,"end":9'),
    ]) {
      const r = decodeEventLine(text);
      expect(r.ok ? 'accepted' : r.error.code).toBe('DUPLICATE_KEY');
    }
  });

  const request =
    '{"type":"CompactionRequested","sessionId":"s","seq":4,"eventId":"e","occurredAt":9,"requestId":"r","unit":"TURNS","summaryInput":{"start":0,"end":2},"tailStart":2}';

  it('a request with a repeated field is dead-lettered and still answered when sessionId, seq and requestId are unambiguous', () => {
    const r = decodeEventLine(request.replace('"tailStart":2', '"tailStart":2,"tailStart":1'));
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'DUPLICATE_KEY', field: 'tailStart' },
      request: { type: 'MalformedRequest', sessionId: 's', seq: 4, requestId: 'r', occurredAt: 9 },
    });
    const time = decodeEventLine(
      request.replace('"occurredAt":9', '"occurredAt":9,"occurredAt":8'),
    );
    expect(time).toMatchObject({ request: { occurredAt: null } });
  });

  it.each(['sessionId', 'seq', 'requestId', 'type'])(
    'a request whose %s is repeated is not answered: which one it is, is unknown',
    (field) => {
      const value = field === 'seq' ? '5' : field === 'type' ? '"CompactionRequested"' : '"z"';
      const text = request.replace('{', `{"${field}":${value},`);
      const r = decodeEventLine(text);
      expect(r.ok).toBe(false);
      expect('request' in r && r.request !== undefined).toBe(false);
    },
  );
});

describe('seq null or absent: only out of band (contract §3)', () => {
  const base = '"sessionId":"s","eventId":"e","occurredAt":1';
  it.each([
    [
      'SpillCompleted',
      '"spillRequestId":"x","handle":"file:///x","unit":"TURNS","range":{"start":0,"end":1}',
    ],
    ['SpillFailed', '"spillRequestId":"x","error":"disk full"'],
    ['LossAcknowledged', '"unit":"TURNS","range":{"start":0,"end":1},"by":"me","reason":"ok"'],
  ])('%s decodes with seq null or absent', (type, fields) => {
    for (const seq of ['"seq":null,', '']) {
      const r = decodeEventLine(`{"type":"${type}",${seq}${base},${fields}}`);
      expect(r).toMatchObject({ ok: true, event: { type, seq: null } });
    }
  });

  it.each([
    'SessionOpened',
    'TurnAppended',
    'Truncated',
    'CompactionRequested',
    'CompactionCommitted',
    'SessionClosed',
  ])('%s with seq null or absent is a dead letter naming seq', (type) => {
    for (const [seq, code] of [
      ['"seq":null,', 'WRONG_TYPE'],
      ['', 'MISSING_FIELD'],
    ] as const) {
      const r = decodeEventLine(`{"type":"${type}",${seq}${base}}`);
      expect(r.ok ? null : [r.error.code, r.error.field]).toEqual([code, 'seq']);
    }
  });
});

describe('UTF-8', () => {
  it('firstInvalidUtf8 agrees with a fatal TextDecoder on random bytes, and points at a byte that fails', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        let valid = true;
        try {
          fatal.decode(bytes);
        } catch {
          valid = false;
        }
        const at = firstInvalidUtf8(bytes);
        expect(at < 0).toBe(valid);
        if (!valid) expect(() => fatal.decode(bytes.subarray(0, at + 4))).toThrow();
        if (!valid) expect(() => fatal.decode(bytes.subarray(0, at))).not.toThrow();
      }),
      { numRuns: 5000 },
    );
  });

  it('decodeEventBytes: an invalid byte is NOT_UTF8 with its offset; valid multi-byte text decodes', () => {
    const good = Buffer.from(
      '{"type":"SessionClosed","sessionId":"sé☃😀","seq":1,"eventId":"e","occurredAt":1}',
    );
    expect(decodeEventBytes(good)).toMatchObject({ ok: true, event: { sessionId: 'sé☃😀' } });
    const bad = Buffer.from(good);
    bad[bad.indexOf(0xe2) + 1] = 0x41; // break the snowman's continuation byte
    const r = decodeEventBytes(bad);
    expect(r.ok ? null : r.error).toEqual({
      code: 'NOT_UTF8',
      message: `not valid UTF-8: byte 0xe2 at byte offset ${good.indexOf(0xe2)} does not start or continue a character`,
    });
  });
});
