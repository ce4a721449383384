/**
 * Nothing the processor writes may be refused for its size (src/kafka/recordLimits.ts,
 * deadLetters.ts, boundedText.ts): a dead letter fits its topic's max.message.bytes, keeping a
 * prefix of its value (then key) with headers giving the original's length and sha256; copied
 * texts are capped at a character boundary; a limit the broker shows to be lower is learned.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { capText, quoted, MAX_HEADER_TEXT_BYTES } from '../../src/kafka/boundedText';
import { deadLetter } from '../../src/kafka/deadLetters';
import { estimatedBytes } from '../../src/kafka/outputChunks';
import { DEFAULT_MAX_MESSAGE_BYTES, RecordLimits, fits } from '../../src/kafka/recordLimits';

const SOURCE = { topic: 'agent.context-changes', partition: 3 };
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('deadLetter', () => {
  it('keeps the original key and value when they fit, with the headers of contract §6', () => {
    const r = { key: Buffer.from('s-1'), value: Buffer.from('{"type":"X"}'), offset: '17' };
    const m = deadLetter(
      r,
      SOURCE,
      'UNKNOWN_TYPE',
      'unknown event type "X"',
      DEFAULT_MAX_MESSAGE_BYTES,
    );
    expect(m).toEqual({
      key: r.key,
      value: r.value,
      headers: {
        'cg.error.code': 'UNKNOWN_TYPE',
        'cg.error.message': 'unknown event type "X"',
        'cg.source.topic': SOURCE.topic,
        'cg.source.partition': '3',
        'cg.source.offset': '17',
      },
    });
  });

  it('fits any key, value and message into the limit, saying what was cut with its length and sha256', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300_000 }),
        fc.integer({ min: 0, max: 300_000 }),
        fc.string({ maxLength: 3000 }),
        fc.integer({ min: 4_096, max: 400_000 }),
        (keyBytes, valueBytes, message, limit) => {
          const r = {
            key: Buffer.alloc(keyBytes, 0x6b),
            value: Buffer.alloc(valueBytes, 0x76),
            offset: '99',
          };
          const m = deadLetter(r, SOURCE, 'KEY_MISMATCH', message, limit);
          expect(fits(m, limit)).toBe(true);
          const h = m.headers!;
          expect(Buffer.byteLength(String(h['cg.error.message']))).toBeLessThanOrEqual(
            MAX_HEADER_TEXT_BYTES,
          );
          const cut = String(h['cg.truncated'] ?? '');
          const key = m.key as Buffer;
          const value = m.value as Buffer;
          // What is kept is a prefix of the original, and a cut part is named with its digest.
          expect(r.key.subarray(0, key.length).equals(key)).toBe(true);
          expect(r.value.subarray(0, value.length).equals(value)).toBe(true);
          if (value.length < r.value.length) {
            expect(cut).toContain('value');
            expect(h['cg.original.value.length']).toBe(String(valueBytes));
            expect(h['cg.original.value.sha256']).toBe(sha256(r.value));
          }
          if (key.length < r.key.length) {
            expect(cut).toBe('key,value');
            expect(value.length).toBe(0);
            expect(h['cg.original.key.sha256']).toBe(sha256(r.key));
          }
          if (cut === '')
            expect(estimatedBytes({ key: r.key, value: r.value })).toBeLessThan(limit);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('cuts a 600 KB key + 500 KB value (a KEY_MISMATCH at the input limit) to fit 1 MiB', () => {
    const r = { key: Buffer.alloc(600 * 1024, 1), value: Buffer.alloc(500 * 1024, 2), offset: '1' };
    const m = deadLetter(
      r,
      SOURCE,
      'KEY_MISMATCH',
      `record key ${'k'.repeat(700_000)}`,
      DEFAULT_MAX_MESSAGE_BYTES,
    );
    expect(estimatedBytes(m)).toBeLessThan(DEFAULT_MAX_MESSAGE_BYTES);
    expect((m.key as Buffer).equals(r.key)).toBe(true);
    expect(m.headers!['cg.truncated']).toBe('value');
  });
});

describe('capText and quoted', () => {
  it('cap at a character boundary and say the whole length', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 2000 }),
        fc.integer({ min: 40, max: 1200 }),
        (s, max) => {
          const capped = capText(s, max);
          expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(max);
          if (Buffer.byteLength(s) <= max) expect(capped).toBe(s);
          else {
            expect(capped).toMatch(new RegExp(`… \\(${Buffer.byteLength(s)} bytes in all\\)$`));
            expect(capped).not.toContain('\uFFFD');
          }
        },
      ),
    );
  });

  it('quote short texts whole and long ones by their start and length', () => {
    expect(quoted(null)).toBe('null');
    expect(quoted('s-1')).toBe('"s-1"');
    const long = quoted('x'.repeat(600_000));
    expect(long).toBe(`"${'x'.repeat(200)}"… (600000 characters)`);
    // Never half a surrogate pair.
    expect(quoted(`${'y'.repeat(199)}😀${'z'.repeat(300)}`)).toBe(
      `"${'y'.repeat(199)}"… (501 characters)`,
    );
  });
});

describe('RecordLimits', () => {
  it("is a topic's max.message.bytes, Kafka's default for others, and lowers on a refusal only", () => {
    const limits = new RecordLimits(new Map([['dlq', 200_000]]));
    expect(limits.of('dlq')).toBe(200_000);
    expect(limits.of('verdicts')).toBe(DEFAULT_MAX_MESSAGE_BYTES);
    // The broker refused a 150,000-byte record for dlq: nothing that large fits any more.
    expect(limits.refused('dlq', 150_000)).toBe(true);
    expect(fits({ key: null, value: Buffer.alloc(150_000 - 24) }, limits.of('dlq'))).toBe(false);
    expect(fits({ key: null, value: Buffer.alloc(140_000) }, limits.of('dlq'))).toBe(true);
    // A refusal of something larger than the known limit is no news.
    expect(limits.refused('dlq', 180_000)).toBe(false);
    expect(limits.of('verdicts')).toBe(DEFAULT_MAX_MESSAGE_BYTES);
  });
});
