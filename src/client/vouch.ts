/**
 * What a spill may sign (contract §4b: "a signature vouches for every position of its range"):
 * only the positions that were stored and read back, position by position, in the
 * unit the spill was asked in. A spill request is a request, not a proof: anyone who can write
 * the input topic can make one, for any session and any range. So neither the SpillWorker nor
 * the client's own spill loop reports the requested range; both report what `storeVouched`
 * returns, which is what `vouchedRange` allows: the part of the request, from its start, that
 * the stored pieces cover without a hole. What is left of the request becomes unspillable at
 * the guard (contract §4 SpillCompleted: VIOLATION SPILL_INCOMPLETE); nothing at all is a
 * SpillFailed naming the first missing position. test/unit/spill-vouch.test.ts holds the rule
 * and both users of it; test/integration/spill-vouch.test.ts holds a forged request over
 * [0, 2^52 − 1) against a processor with a key ring.
 */
import type { Span, Unit } from '../engine/events';
import { SpillStoreError } from './errors';
import { type SpillStore, spillStoreName } from './spill';

/**
 * One piece of a transcript and the positions its content holds, `[start, end)` in each unit
 * the source can place it in (a turn knows all three: `turnPiece`). A piece with no span in the
 * unit a spill asks for holds nothing of that spill.
 */
export interface TranscriptPiece {
  positions: Partial<Record<Unit, Span>>;
  content: Uint8Array | string;
}

/** A turn's place in every unit (GuardedSession.position gives it). */
export interface PiecePosition {
  turn: number;
  tokens: Span;
  messages: Span;
}

/** The piece holding one turn: `[turn, turn + 1)` in TURNS, its tokens and its messages. */
export function turnPiece(p: PiecePosition, content: Uint8Array | string): TranscriptPiece {
  return {
    positions: {
      TURNS: { start: p.turn, end: p.turn + 1 },
      TOKENS: p.tokens,
      MESSAGES: p.messages,
    },
    content,
  };
}

/** What may be signed of a request: `range` (possibly empty), and the first position not held. */
export interface Vouched {
  /** `[requested.start, x)` with requested.start ≤ x ≤ requested.end: every position held. */
  range: Span;
  /** `x` when it is short of requested.end (the first position of the request not held), else null. */
  firstMissing: number | null;
}

const isSpan = (s: Span | undefined): s is Span =>
  s !== undefined &&
  Number.isSafeInteger(s.start) &&
  Number.isSafeInteger(s.end) &&
  s.start >= 0 &&
  s.end > s.start;

/**
 * The contiguous part of `requested`, from its start, every position of which lies in one of
 * `held` (spans in the request's unit; empty or malformed ones hold nothing). Pure: the one rule
 * for what a spill may sign, shared by the SpillWorker and the client's spill loop.
 */
export function vouchedRange(requested: Span, held: readonly Span[]): Vouched {
  return covering(requested, held, (s) => s).vouched;
}

/**
 * The rule of `vouchedRange`, and the items it took, in position order: from the request's
 * start, each item that reaches further than those before it (of items starting at the same
 * place, the longest), until the request's end or a position no item holds. The items taken
 * are what a spill stores: none of them is redundant.
 */
function covering<T>(
  requested: Span,
  items: readonly T[],
  spanOf: (item: T) => Span | undefined,
): { vouched: Vouched; taken: T[] } {
  const start = requested.start;
  const end = Math.max(requested.start, requested.end);
  const placed = items
    .map((item) => ({ item, span: spanOf(item) }))
    .filter((p): p is { item: T; span: Span } => isSpan(p.span))
    .sort((a, b) => a.span.start - b.span.start || b.span.end - a.span.end);
  const taken: T[] = [];
  let x = start;
  for (const { item, span } of placed) {
    if (x >= end || span.start > x) break;
    if (span.end > x) {
      taken.push(item);
      x = span.end;
    }
  }
  x = Math.min(x, end);
  return { vouched: { range: { start, end: x }, firstMissing: x < end ? x : null }, taken };
}

const bytesOf = (c: Uint8Array | string): Uint8Array =>
  typeof c === 'string' ? Buffer.from(c, 'utf8') : c;

const show = (unit: Unit, s: Span) => `${unit}[${s.start},${s.end})`;

/** What a spill writes and, when it succeeds, may sign. */
export interface VouchedSpill {
  sessionId: string;
  spillRequestId: string;
  unit: Unit;
  /** The range asked for. */
  range: Span;
}

/**
 * Writes the pieces that cover the request from its start, reads the stored spill back, and
 * returns the handle with the range every position of which was read back as its piece was
 * written (`vouchedRange` over the pieces found again at their place). `pieces` null: no
 * transcript of this session at all. Throws (the caller answers SpillFailed with the message)
 * when not one position of a non-empty request is held, or read back; the message names the
 * first missing position. A request for nothing is stored as nothing and reported as nothing.
 */
export async function storeVouched(
  store: SpillStore,
  spill: VouchedSpill,
  pieces: readonly TranscriptPiece[] | null,
): Promise<{ handle: string; range: Span }> {
  const asked = show(spill.unit, spill.range);
  if (pieces === null)
    throw new Error(
      `session ${spill.sessionId}: no transcript of this session is held here: nothing of ${asked} was stored`,
    );
  if (!Array.isArray(pieces))
    throw new Error(
      `session ${spill.sessionId}: the source gave content without positions (expected pieces placed in ${spill.unit}, or null): nothing of ${asked} was stored`,
    );
  const held = pieces
    .map((p) => ({ span: p.positions[spill.unit], bytes: bytesOf(p.content) }))
    .filter((p) => p.bytes.length > 0);
  // The pieces that make up the held part, in position order, none of them redundant.
  const { vouched: given, taken: used } = covering(spill.range, held, (p) => p.span);
  if (given.firstMissing === spill.range.start) {
    const placed = pieces.some((p) => p.positions[spill.unit] !== undefined);
    throw new Error(
      `session ${spill.sessionId}: the transcript does not hold ${spill.unit} position ${spill.range.start}, the first of ${asked}` +
        (placed ? '' : ` (its pieces are not placed in ${spill.unit})`) +
        ': nothing was stored',
    );
  }
  const content = Buffer.concat(used.map((p) => p.bytes));
  const stored = show(spill.unit, given.range);
  const handle = await storeStep(store, `write the spill of ${stored}`, spill, () =>
    store.write({
      sessionId: spill.sessionId,
      spillRequestId: spill.spillRequestId,
      unit: spill.unit,
      range: given.range,
      content,
    }),
  );
  // Read back: a piece counts only if its bytes are found again where they were written.
  const back = await storeStep(store, `read back the spill of ${stored}`, spill, () =>
    store.read(handle),
  );
  const readBack: Span[] = [];
  let offset = 0;
  for (const p of used) {
    const at = back.subarray(offset, offset + p.bytes.length);
    if (at.length === p.bytes.length && Buffer.compare(at, p.bytes) === 0) readBack.push(p.span!);
    offset += p.bytes.length;
  }
  const vouched = vouchedRange(given.range, readBack);
  if (vouched.firstMissing === spill.range.start && given.range.end > given.range.start)
    throw new Error(
      `session ${spill.sessionId}: the spill store did not give back ${spill.unit} position ${spill.range.start}, the first of ${asked}, as written: nothing is reported stored`,
    );
  return { handle, range: vouched.range };
}

/**
 * One call of the store; a throw is a SpillStoreError naming the store, what it was asked and
 * why: the one line that tells a broken store (a full disk, a directory not writable) apart
 * from a transcript that lacks turns.
 */
async function storeStep<T>(
  store: SpillStore,
  what: string,
  spill: VouchedSpill,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (e) {
    throw new SpillStoreError(
      `spill store ${spillStoreName(store)} could not ${what} of session ${spill.sessionId}: ${messageOf(e)}`,
      { cause: e },
    );
  }
}

/** An error's message (a Node error made in another realm is no `instanceof Error`). */
function messageOf(e: unknown): string {
  const message = (e as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message !== '' ? message : String(e);
}
