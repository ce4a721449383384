/**
 * What a spill may report (contract §4 SpillCompleted: `range` is stored losslessly): the bytes
 * a transcript reader gave, checked to be the whole requested range before anything is written.
 * A reader that cannot give every turn must make the spill fail (SpillFailed, so the guard
 * HALTs), never succeed with less: a SpillCompleted over a range it did not store would let the
 * guard approve a loss as LOSSLESS_SPILL.
 */

/**
 * A transcript reader's answer: the bytes of the turns, or one entry per turn of
 * `[firstTurn, endTurn)` in order, which lets the spill loop check that none is missing.
 */
export type TranscriptContent = Uint8Array | string | readonly (Uint8Array | string)[];

/** The turns a spill asked for. */
export interface TurnRange {
  firstTurn: number;
  endTurn: number;
}

const bytesOf = (c: Uint8Array | string): Uint8Array =>
  typeof c === 'string' ? Buffer.from(c, 'utf8') : c;

/**
 * The bytes to store, or a throw (the spill loop answers SpillFailed with its message) when the
 * answer cannot hold every turn: an entry per turn missing (a hole or too few), or nothing at
 * all for a non-empty range.
 */
export function transcriptBytes(content: TranscriptContent, turns: TurnRange): Uint8Array {
  const wanted = turns.endTurn - turns.firstTurn;
  if (Array.isArray(content)) {
    const parts = content as readonly (Uint8Array | string | undefined)[];
    const missing: number[] = [];
    for (let i = 0; i < wanted; i++) if (parts[i] === undefined) missing.push(turns.firstTurn + i);
    if (missing.length > 0 || parts.length !== wanted)
      throw new Error(
        `the transcript reader gave ${wanted - missing.length} of the ${wanted} turns [${turns.firstTurn},${turns.endTurn})` +
          (missing.length > 0 ? `; missing turns ${describeTurns(missing)}` : '') +
          (parts.length > wanted ? `; and ${parts.length - wanted} entries more than asked` : '') +
          ': nothing was stored',
      );
    return Buffer.concat(parts.map((p) => bytesOf(p!)));
  }
  const bytes = bytesOf(content as Uint8Array | string);
  if (wanted > 0 && bytes.length === 0)
    throw new Error(
      `the transcript reader gave nothing for the turns [${turns.firstTurn},${turns.endTurn}): nothing was stored`,
    );
  return bytes;
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
