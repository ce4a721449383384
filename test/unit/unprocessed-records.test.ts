/**
 * The records of a fetched batch the committed state does not include yet
 * (src/kafka/batch/unprocessedRecords.ts): a late redelivery of committed records is skipped.
 */
import fc from 'fast-check';
import { unprocessedRecords } from '../../src/kafka/batch/unprocessedRecords';

describe('unprocessedRecords', () => {
  it('keeps exactly the records at or after the committed position, in order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.bigInt({ min: 0n, max: 1n << 40n }), { maxLength: 30 }),
        fc.option(fc.bigInt({ min: 0n, max: (1n << 40n) + 1n })),
        (offsets, position) => {
          const messages = [...offsets]
            .sort((a, b) => (a < b ? -1 : 1))
            .map((o) => ({ offset: String(o) }));
          const kept = unprocessedRecords(messages, position);
          const want =
            position === null ? messages : messages.filter((m) => BigInt(m.offset) >= position);
          expect(kept).toEqual(want);
        },
      ),
    );
  });

  it('a batch wholly before the position is nothing to do; one straddling it keeps its tail', () => {
    const batch = ['10', '11', '12', '13'].map((offset) => ({ offset }));
    expect(unprocessedRecords(batch, 14n)).toEqual([]);
    expect(unprocessedRecords(batch, 12n).map((m) => m.offset)).toEqual(['12', '13']);
    expect(unprocessedRecords(batch, 10n)).toBe(batch);
    expect(unprocessedRecords(batch, null)).toBe(batch);
  });
});
