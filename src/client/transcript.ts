/**
 * What a spill may report (contract §4 SpillCompleted: `range` is stored losslessly; §4b: a
 * signature vouches for every position of its range): a transcript reader's answer, turned
 * into pieces placed at their turns' positions, so that the spill loop stores and reports only
 * the turns it was given (src/client/vouch.ts), never the range it asked for.
 */
import { type PiecePosition, type TranscriptPiece, turnPiece } from './vouch';

/**
 * A transcript reader's answer: the bytes of the turns, or one entry per turn of
 * `[firstTurn, endTurn)` in order, which lets the spill loop place each turn (and report only
 * the turns before the first one missing).
 */
export type TranscriptContent = Uint8Array | string | readonly (Uint8Array | string)[];

/** The turns a spill asked for. */
export interface TurnRange {
  firstTurn: number;
  endTurn: number;
}

/**
 * The pieces a reader's answer holds: one per entry given, at its turn's positions, or the
 * bytes of one piece as the turns `[firstTurn, endTurn)` together (the loop cannot check one
 * piece turn by turn: a reader that returns one must throw when it lacks a turn, decision 101).
 * A missing entry holds nothing; more entries than turns means entry i may not be turn i, so
 * none is placed (a throw: the loop answers SpillFailed).
 */
export function transcriptPieces(
  content: TranscriptContent,
  turns: TurnRange,
  position: (turn: number) => PiecePosition,
): TranscriptPiece[] {
  const wanted = turns.endTurn - turns.firstTurn;
  if (wanted <= 0) return [];
  if (Array.isArray(content)) {
    const parts = content as readonly (Uint8Array | string | undefined)[];
    if (parts.length > wanted)
      throw new Error(
        `the transcript reader gave ${parts.length} entries for the ${wanted} turns [${turns.firstTurn},${turns.endTurn}): ` +
          'they cannot be placed at their turns, nothing was stored',
      );
    const pieces: TranscriptPiece[] = [];
    parts.forEach((part, i) => {
      if (part !== undefined) pieces.push(turnPiece(position(turns.firstTurn + i), part));
    });
    return pieces;
  }
  const first = position(turns.firstTurn);
  const last = position(turns.endTurn - 1);
  return [
    {
      positions: {
        TURNS: { start: first.turn, end: last.turn + 1 },
        TOKENS: { start: first.tokens.start, end: last.tokens.end },
        MESSAGES: { start: first.messages.start, end: last.messages.end },
      },
      content: content as Uint8Array | string,
    },
  ];
}

/** `[3, 4, 5, 9]` → `3-5, 9` (the first few runs). */
export function describeTurns(turns: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < turns.length && runs.length < 8;) {
    let j = i;
    while (j + 1 < turns.length && turns[j + 1] === turns[j]! + 1) j++;
    runs.push(i === j ? `${turns[i]}` : `${turns[i]}-${turns[j]}`);
    i = j + 1;
  }
  return runs.join(', ') + (runs.length === 8 ? ', …' : '');
}

/** What `transcriptLines` needs of a spill's range. */
export interface LinesRange extends TurnRange {
  sessionId: string;
}

/**
 * The lines a transcript holds for the turns of `r`, each ended by a newline; throws, naming the
 * missing turns, when any turn of `r` is not held (followed before a restart, or elsewhere):
 * the integrations' transcripts answer a spill with this, so it fails rather than shrinks.
 */
export function transcriptLines(
  transcript: readonly (string | undefined)[],
  r: LinesRange,
): string {
  const missing: number[] = [];
  let out = '';
  for (let turn = r.firstTurn; turn < r.endTurn; turn++) {
    const line = transcript[turn];
    if (line === undefined) missing.push(turn);
    else out += `${line}\n`;
  }
  if (missing.length > 0)
    throw new Error(
      `session ${r.sessionId}: the transcript does not hold turns ${describeTurns(missing)} of [${r.firstTurn},${r.endTurn}) ` +
        '(followed before a restart, or elsewhere): they cannot be spilled',
    );
  return out;
}

/** At most this many UTF-16 units of a failure's text go into a SpillFailed (≤ 3,072 bytes). */
export const SPILL_ERROR_MAX = 1024;

/**
 * A SpillFailed's `error` for what went wrong: the message, cut to SPILL_ERROR_MAX units, any
 * lone surrogate (one the cut split off included) replaced, so that the answer itself is always
 * within §3's bounds (4,096 bytes, no unpaired surrogate): an answer refused as malformed would
 * leave the spill unanswered.
 */
export function failureText(e: unknown): string {
  const text = (e instanceof Error ? e.message : '') || String(e);
  const cut = text.length > SPILL_ERROR_MAX ? `${text.slice(0, SPILL_ERROR_MAX - 1)}…` : text;
  // A lone surrogate (a pair split by the cut, or a message built from bad input) is U+FFFD.
  return cut.replace(LONE_SURROGATE, '\uFFFD');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
