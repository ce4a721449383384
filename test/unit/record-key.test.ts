import fc from 'fast-check';
import { isKeyOf } from '../../src/kafka/records';

/** The rule as decisions 146 states it: the key is the sessionId's UTF-8 bytes, byte for byte. */
function reference(key: Buffer | null, sessionId: string): boolean {
  return key !== null && key.equals(Buffer.from(sessionId, 'utf8'));
}

describe('isKeyOf: a record key is its sessionId only when it is its UTF-8 bytes', () => {
  it('agrees with encoding the sessionId, for any text and any key bytes', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: 'grapheme' }),
    );
    const keyFor = (id: string) =>
      fc.oneof(
        fc.constant(Buffer.from(id, 'utf8')),
        fc.constant(Buffer.from(id, 'latin1')),
        fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
        fc.constant(null),
      );
    fc.assert(
      fc.property(
        text.chain((id) => fc.tuple(fc.constant(id), keyFor(id))),
        ([id, key]) => isKeyOf(key, id) === reference(key, id),
      ),
      { numRuns: 5000 },
    );
  });

  it('refuses the Latin-1 bytes of a non-ASCII id, whose character codes they match one for one', () => {
    expect(isKeyOf(Buffer.from([0xe9]), 'é')).toBe(false);
    expect(isKeyOf(Buffer.from('é', 'utf8'), 'é')).toBe(true);
  });

  it('takes the ASCII id as its bytes and refuses a key that differs in one byte or in length', () => {
    expect(isKeyOf(Buffer.from('session-7'), 'session-7')).toBe(true);
    expect(isKeyOf(Buffer.from('session-8'), 'session-7')).toBe(false);
    expect(isKeyOf(Buffer.from('session-7 '), 'session-7')).toBe(false);
    expect(isKeyOf(null, 'session-7')).toBe(false);
  });
});
