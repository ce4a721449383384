/**
 * A spill reports only what it stored (src/client/transcript.ts): a transcript answer that
 * misses a turn of the range, or gives nothing for a non-empty one, is refused before anything
 * is written, so the spill loop sends SpillFailed and never SpillCompleted.
 */
import fc from 'fast-check';
import {
  SPILL_ERROR_MAX,
  describeTurns,
  failureText,
  transcriptBytes,
} from '../../src/client/transcript';
import { decodeEventJson } from '../../src/schema/decodeEvent';

describe('transcriptBytes', () => {
  it('one entry per turn, none missing: their bytes in order; any hole or a wrong count: a throw naming the turns', () => {
    fc.assert(
      fc.property(
        fc.nat(20),
        fc.array(fc.option(fc.string({ minLength: 1 }), { nil: undefined }), { maxLength: 24 }),
        (firstTurn, entries) => {
          const endTurn = firstTurn + entries.length;
          // A sparse array, as `slice` of a transcript with empty slots gives.
          const sparse: string[] = [];
          entries.forEach((e, i) => {
            if (e !== undefined) sparse[i] = e;
          });
          sparse.length = entries.length;
          const complete = entries.every((e) => e !== undefined);
          const turns = { firstTurn, endTurn };
          if (complete) {
            expect(Buffer.from(transcriptBytes(sparse, turns)).toString()).toBe(entries.join(''));
          } else {
            const missing = entries.flatMap((e, i) => (e === undefined ? [firstTurn + i] : []));
            expect(() => transcriptBytes(sparse, turns)).toThrow(
              `missing turns ${describeTurns(missing)}`,
            );
          }
        },
      ),
    );
  });

  it('too few or too many entries for the range are refused', () => {
    expect(() => transcriptBytes(['a', 'b'], { firstTurn: 0, endTurn: 3 })).toThrow(
      /gave 2 of the 3 turns \[0,3\)/,
    );
    expect(() => transcriptBytes(['a', 'b'], { firstTurn: 0, endTurn: 1 })).toThrow(
      /gave 1 of the 1 turns \[0,1\); and 1 entries more than asked/,
    );
  });

  it('bytes or text as one piece: nothing at all for a non-empty range is refused, anything else is taken as given', () => {
    expect(() => transcriptBytes('', { firstTurn: 0, endTurn: 4 })).toThrow(
      /gave nothing for the turns \[0,4\)/,
    );
    expect(() => transcriptBytes(new Uint8Array(), { firstTurn: 2, endTurn: 3 })).toThrow(
      /nothing was stored/,
    );
    expect(transcriptBytes('', { firstTurn: 0, endTurn: 0 })).toHaveLength(0);
    expect(Buffer.from(transcriptBytes('é', { firstTurn: 0, endTurn: 1 })).toString()).toBe('é');
  });

  it('names missing turns as runs', () => {
    expect(describeTurns([0, 1, 2, 5, 7, 8])).toBe('0-2, 5, 7-8');
    expect(describeTurns(Array.from({ length: 20 }, (_, i) => i * 2))).toMatch(/, …$/);
  });
});

describe('failureText', () => {
  it('any failure, however long or broken its text, gives a SpillFailed within the bounds of §3', () => {
    const utf16 = fc
      .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 3 * SPILL_ERROR_MAX })
      .map((units) => String.fromCharCode(...units));
    fc.assert(
      fc.property(utf16, fc.boolean(), (text, asError) => {
        const error = failureText(asError ? new Error(text) : text);
        expect(error.length).toBeLessThanOrEqual(SPILL_ERROR_MAX);
        const decoded = decodeEventJson({
          type: 'SpillFailed',
          sessionId: 's',
          seq: null,
          eventId: 'e',
          occurredAt: 1,
          spillRequestId: 's:r:1',
          error,
        });
        expect(decoded.ok).toBe(true);
        if (text.length <= SPILL_ERROR_MAX && !/[\uD800-\uDFFF]/.test(text))
          expect(error).toBe(text === '' && asError ? 'Error' : text);
      }),
    );
  });
});
