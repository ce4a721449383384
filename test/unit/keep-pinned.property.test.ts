/**
 * keepPinned (src/integrations/compaction/keepPinned.ts) over any run of appends and
 * compactions: every pinned message stays in the context exactly once, verbatim, the copies
 * right after the summary in their original order, the other kept messages in the order the
 * model saw them. The compactions cut where a framework may: anywhere in position order.
 */
import fc from 'fast-check';
import { arrangeAfterSummary, keptPins } from '../../src/integrations/compaction/keepPinned';

interface Msg {
  /** The turn it is reported as (a copy: a new one at the head). */
  turn: number;
  /** The turn of the message it copies (its own turn when it is no copy). */
  origin: number;
  pinned: boolean;
  copy: boolean;
  text: string;
}

type Op = { append: boolean[] } | { compactKeeping: number };

const ops = fc.array(
  fc.oneof(
    fc.record({ append: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }) }),
    fc.record({ compactKeeping: fc.nat({ max: 8 }) }),
  ),
  { maxLength: 40 },
);

/** Replays `run` on an empty context, checking the invariants after every compaction. */
function replay(run: Op[]): void {
  let context: Msg[] = [];
  let summary: Msg | null = null;
  let head = 0;
  const pinnedOrigins = new Set<number>();
  for (const op of run) {
    if ('append' in op) {
      for (const pinned of op.append) {
        const turn = head++;
        context.push({ turn, origin: turn, pinned, copy: false, text: `message ${turn}` });
        if (pinned) pinnedOrigins.add(turn);
      }
      continue;
    }
    const ordered = [...context].sort((a, b) => a.turn - b.turn);
    const cutoff = Math.max(0, ordered.length - op.compactKeeping);
    const summarized = ordered.slice(0, cutoff);
    const kept = new Set(ordered.slice(cutoff));
    const before = context.filter((m) => kept.has(m) && !m.copy);
    const { block, rest, copies } = arrangeAfterSummary({
      summarized: summary ? [summary, ...summarized] : summarized,
      preserved: context.filter((m) => kept.has(m)),
      pinned: (m) => m !== summary && m.pinned,
      inBlock: (m) => m.copy,
      origin: (m) => m.origin,
      copy: (m) => ({ ...m, copy: true }),
    });
    for (const c of copies) c.copy.turn = head++; // new context, at the head
    summary = { turn: -1, origin: -1, pinned: false, copy: false, text: 'summary' };
    context = [...block, ...rest];
    // Once each, verbatim: every pinned origin ever seen is in the context exactly once.
    const origins = context.filter((m) => m.pinned).map((m) => m.origin);
    expect(origins.sort((a, b) => a - b)).toEqual([...pinnedOrigins].sort((a, b) => a - b));
    for (const m of context) expect(m.text).toBe(`message ${m.origin}`);
    // The copies first, in their original order; the rest as the model saw them.
    expect(block.every((m) => m.copy)).toBe(true);
    expect(block.map((m) => m.origin)).toEqual(
      [...block.map((m) => m.origin)].sort((a, b) => a - b),
    );
    expect(rest).toEqual(before);
    // Nothing summarized is kept but through a copy; nothing kept is copied.
    for (const c of copies) expect(kept.has(c.of)).toBe(false);
  }
}

describe('keepPinned', () => {
  it('over any run of appends and compactions, each pinned message is in the context once, verbatim, copies first in original order', () => {
    fc.assert(fc.property(ops, replay), { numRuns: 500 });
  });

  it('puts back copies only of summarized pinned messages, leaving kept ones where they are', () => {
    const m = (turn: number, pinned: boolean, copy = false) => ({ turn, pinned, copy });
    const a = m(0, true);
    const b = m(1, false);
    const c = m(2, true);
    const d = m(3, false);
    const out = arrangeAfterSummary({
      summarized: [a, b],
      preserved: [c, d],
      pinned: (x) => x.pinned,
      inBlock: (x) => x.copy,
      origin: (x) => x.turn,
      copy: (x) => ({ ...x, copy: true }),
    });
    expect(out.copies.map((x) => x.of)).toEqual([a]);
    expect(out.block).toEqual([{ ...a, copy: true }]);
    expect(out.rest).toEqual([c, d]);
  });

  it('keeps CONSTRAINT and PLAN by default, the pins given, or none when off', () => {
    expect(keptPins(undefined)).toEqual(['CONSTRAINT', 'PLAN']);
    expect(keptPins(true)).toEqual(['CONSTRAINT', 'PLAN']);
    expect(keptPins(false)).toEqual([]);
    expect(keptPins(['COMMITMENT'])).toEqual(['COMMITMENT']);
  });
});
