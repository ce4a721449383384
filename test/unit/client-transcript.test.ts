/**
 * A spill reports only what it stored (src/client/transcript.ts, src/client/vouch.ts): a
 * transcript reader's answer becomes pieces placed at their turns' positions; a missing entry
 * holds nothing, and an answer that cannot be placed (more entries than turns) is refused.
 */
import fc from 'fast-check';
import {
  SPILL_ERROR_MAX,
  describeTurns,
  failureText,
  transcriptPieces,
} from '../../src/client/transcript';
import { decodeEventJson } from '../../src/schema/decodeEvent';

/** Turn i: 3 tokens and 2 messages each, so the units differ. */
const at = (turn: number) => ({
  turn,
  tokens: { start: 3 * turn, end: 3 * turn + 3 },
  messages: { start: 2 * turn, end: 2 * turn + 2 },
});

describe('transcriptPieces', () => {
  it('one entry per turn: each entry given is a piece at its own turn in every unit, a missing entry is no piece', () => {
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
          const pieces = transcriptPieces(sparse, { firstTurn, endTurn }, at);
          const expected = entries.flatMap((e, i) => {
            if (e === undefined) return [];
            const p = at(firstTurn + i);
            return [
              {
                positions: {
                  TURNS: { start: p.turn, end: p.turn + 1 },
                  TOKENS: p.tokens,
                  MESSAGES: p.messages,
                },
                content: e,
              },
            ];
          });
          expect(pieces).toEqual(expected);
        },
      ),
    );
  });

  it('more entries than turns cannot be placed (entry i may not be turn i): refused', () => {
    expect(() => transcriptPieces(['a', 'b'], { firstTurn: 0, endTurn: 1 }, at)).toThrow(
      /gave 2 entries for the 1 turns \[0,1\): they cannot be placed/,
    );
  });

  it('bytes or text as one piece: placed over all the turns asked for, first to last, in every unit', () => {
    expect(transcriptPieces('abc', { firstTurn: 2, endTurn: 5 }, at)).toEqual([
      {
        positions: {
          TURNS: { start: 2, end: 5 },
          TOKENS: { start: 6, end: 15 },
          MESSAGES: { start: 4, end: 10 },
        },
        content: 'abc',
      },
    ]);
    expect(transcriptPieces('abc', { firstTurn: 3, endTurn: 3 }, at)).toEqual([]);
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
