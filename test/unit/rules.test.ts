/**
 * Every rule of contract §5, fired and not fired, with exact holes and exact `rulesChecked`, and
 * its healing by spills (SpillCompleted: P) and acknowledgements (LossAcknowledged: A).
 *
 * Sessions have turns of 1 token and 1 message, so a turn's position is the same number in
 * TURNS, TOKENS and MESSAGES: every expectation holds in each unit, and the rules run in all
 * three. Unless said otherwise: floor span f = 2, 10 turns (H = 10), coverage STRICT.
 */
import type { Policy, Unit, Verdict } from '../../src/engine';
import { SessionBuilder } from '../support/sessionBuilder';
import {
  ALL_RULES,
  PINNED_RULES,
  UNITS,
  play,
  policyIn,
  reasonsOf,
  spillOf,
  verdictOf,
} from '../support/engineHarness';

const SID = 'sess';

function other(unit: Unit): Unit {
  return unit === 'TURNS' ? 'TOKENS' : 'TURNS';
}

function session(unit: Unit, overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn(unit, 2, overrides)).turns(turns, 1);
}

/** Plays the builder's stream; the verdict and spill request of its last event (a request). */
function decideLast(b: SessionBuilder) {
  const p = play(b.events);
  const v = verdictOf(p.last);
  return { v, spill: spillOf(p.last), played: p };
}

function expectHolesIn(v: Verdict, unit: Unit): void {
  for (const r of v.reasons) for (const h of r.holes) expect(h.unit).toBe(unit);
}

const TO_INVALID = ALL_RULES.slice(0, 4);
const TO_UNIT_MISMATCH = ALL_RULES.slice(0, 3);

describe.each(UNITS)('rules with the floor in %s', (unit) => {
  const ru = unit;

  describe('a normal compaction', () => {
    it('approves with INVARIANT_HOLDS, every rule checked, nothing fired, no spill', () => {
      const { v, spill } = decideLast(session(unit).request('r1', ru, 0, 6, 6));
      expect(v).toMatchObject({
        decision: 'APPROVE',
        basis: 'INVARIANT_HOLDS',
        action: 'NONE',
        reasons: [],
        diagnostic: null,
        spillRequestId: null,
      });
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
      expect(spill).toBeNull();
    });

    it('under PINNED coverage lists every rule but EVICTED_UNCOVERED', () => {
      const { v } = decideLast(session(unit, { coverage: 'PINNED' }).request('r1', ru, 0, 6, 6));
      expect(v.decision).toBe('APPROVE');
      expect(v.rulesChecked).toEqual(PINNED_RULES);
    });
  });

  describe('EVENT_GAP', () => {
    it('fires after a seq gap with hole [0,Hg) (Hg = H = 10 here) and asks for a spill of [0,10)', () => {
      const b = session(unit).skipSeq().request('r1', ru, 0, 6, 6);
      const { v, spill } = decideLast(b);
      expect(v.decision).toBe('REFUSE');
      expect(reasonsOf(v)).toEqual([{ code: 'EVENT_GAP', holes: [[0, 10]] }]);
      expectHolesIn(v, unit);
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
      expect(v.action).toBe('SPILL');
      expect(spill).toMatchObject({ unit, range: { start: 0, end: 10 } });
    });

    it('reaches the positions the gap-revealing request names: Hg = max(eIn,t) = 12 beyond H = 10', () => {
      const { v, spill } = decideLast(session(unit).skipSeq().request('r1', ru, 0, 12, 12));
      expect(reasonsOf(v)).toEqual([
        { code: 'EVENT_GAP', holes: [[0, 12]] },
        { code: 'TAIL_BELOW_FLOOR', holes: [[10, 12]] },
      ]);
      expect(spill?.range).toEqual({ start: 0, end: 12 });
    });

    it('is listed but does not fire without Hg', () => {
      const { v } = decideLast(session(unit).request('r1', ru, 0, 6, 6));
      expect(v.rulesChecked).toContain('EVENT_GAP');
      expect(v.reasons).toEqual([]);
    });

    it('is healed by a spill of [0,Hg) (basis LOSSLESS_SPILL), not by a partial one', () => {
      const b = session(unit).skipSeq().request('r1', ru, 0, 6, 6);
      b.spilled('any', unit, 0, 5).request('r1', ru, 0, 6, 6);
      const partial = decideLast(b).v;
      expect(reasonsOf(partial)).toEqual([{ code: 'EVENT_GAP', holes: [[5, 10]] }]);
      b.spilled('any', unit, 5, 10).request('r1', ru, 0, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
    });

    it('is healed by spill plus acknowledgement of the rest (basis LOSS_ACKNOWLEDGED)', () => {
      const b = session(unit).skipSeq().request('r1', ru, 0, 6, 6);
      b.spilled('any', unit, 0, 5).acknowledge(unit, 5, 10).request('r1', ru, 0, 6, 6);
      const { v } = decideLast(b);
      expect(v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
    });
  });

  describe('UNIT_MISMATCH, floor unit ≠ truncator unit (request in U)', () => {
    const mismatch = { truncatorUnit: other(unit) };

    it('fires without holes when t > 0, and a spill is asked for', () => {
      const { v, spill } = decideLast(session(unit, mismatch).request('r1', ru, 0, 6, 6));
      expect(reasonsOf(v)).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
      expect(v.action).toBe('SPILL');
      expect(spill).toMatchObject({ unit, range: { start: 0, end: 10 }, holes: [] });
    });

    it('is healed when t = 0 (nothing leaves the verbatim window)', () => {
      const { v } = decideLast(session(unit, mismatch).request('r1', ru, 0, 0, 0));
      expect(v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
    });

    it('is healed by a spill of [0,t) (LOSSLESS_SPILL) and not by a spill of less', () => {
      const b = session(unit, mismatch).spilled('x', unit, 0, 5).request('r1', ru, 0, 6, 6);
      expect(reasonsOf(decideLast(b).v)).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
      b.spilled('x', unit, 5, 6).request('r1', ru, 0, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
    });

    it('is healed by an acknowledgement of [0,t) (LOSS_ACKNOWLEDGED)', () => {
      const b = session(unit, mismatch).acknowledge(unit, 0, 6).request('r1', ru, 0, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    });
  });

  describe('UNIT_MISMATCH, request unit ≠ U', () => {
    it('fires, stops evaluation after UNIT_MISMATCH and HALTs asking for a corrected request', () => {
      const { v, spill } = decideLast(session(unit).request('r1', other(unit), 0, 6, 6));
      expect(reasonsOf(v)).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
      expect(v.rulesChecked).toEqual(TO_UNIT_MISMATCH);
      expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT', spillRequestId: null });
      expect(v.diagnostic).toMatch(/corrected request/);
      expect(spill).toBeNull();
    });

    it('is never healed: not with t = 0, nor after spills and acknowledgements in both units', () => {
      const b = session(unit)
        .spilled('x', unit, 0, 10)
        .spilled('y', other(unit), 0, 10)
        .acknowledge(unit, 0, 10);
      b.request('r1', other(unit), 0, 0, 0);
      const { v } = decideLast(b);
      expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT' });
      expect(reasonsOf(v)).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
    });

    it('after a gap lists EVENT_GAP fired too, and still HALTs', () => {
      const { v } = decideLast(session(unit).skipSeq().request('r1', other(unit), 0, 6, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'EVENT_GAP', holes: [[0, 10]] },
        { code: 'UNIT_MISMATCH', holes: [] },
      ]);
      expect(v.rulesChecked).toEqual(TO_UNIT_MISMATCH);
      expect(v.action).toBe('HALT');
    });
  });

  describe('INVALID_REQUEST', () => {
    const cases: [string, (b: SessionBuilder) => SessionBuilder][] = [
      ['summary input ending beyond H′ (eIn = 11 > 10)', (b) => b.request('r', ru, 0, 11, 6)],
      ['a reversed input (sIn 5 > eIn 4)', (b) => b.request('r', ru, 5, 4, 6)],
      ['a tail beyond H′ (t = 11 > 10)', (b) => b.request('r', ru, 0, 6, 11)],
      [
        'a tail below the verbatim start (V = 6, t = 5)',
        (b) => b.request('c', ru, 0, 6, 6).commit('c', ru, 0, 6, 6).request('r', ru, 0, 5, 5),
      ],
    ];
    it.each(cases)(
      'fires for %s, stops evaluation there, HALTs for a corrected request',
      (_n, make) => {
        const { v, spill } = decideLast(make(session(unit)));
        expect(reasonsOf(v)).toEqual([{ code: 'INVALID_REQUEST', holes: [] }]);
        expect(v.rulesChecked).toEqual(TO_INVALID);
        expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT', spillRequestId: null });
        expect(v.diagnostic).toMatch(/corrected request/);
        expect(spill).toBeNull();
      },
    );

    it('does not fire at the bounds eIn = t = H′ and t = V', () => {
      const atHead = decideLast(session(unit).request('r', ru, 0, 10, 10)).v;
      expect(atHead.rulesChecked).toEqual([...ALL_RULES]);
      expect(atHead.reasons.map((r) => r.code)).not.toContain('INVALID_REQUEST');
      const b = session(unit).request('c', ru, 0, 6, 6).commit('c', ru, 0, 6, 6);
      const atV = decideLast(b.request('r', ru, 0, 6, 6)).v;
      expect(atV).toMatchObject({ decision: 'APPROVE' });
    });

    it('accepts positions up to Hg after a gap (H′ = max(H, Hg))', () => {
      // The truncation names [10,14): a gap, Hg = 14, H′ = 14.
      const b = session(unit).truncate(unit, 10, 14).request('r', ru, 0, 12, 12);
      const { v } = decideLast(b);
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
      expect(v.reasons.map((r) => r.code)).not.toContain('INVALID_REQUEST');
    });

    it('is never healed, not by a spill and an acknowledgement of everything', () => {
      const b = session(unit).spilled('x', unit, 0, 10).acknowledge(unit, 0, 10);
      const { v } = decideLast(b.request('r', ru, 5, 4, 6));
      expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT' });
      expect(reasonsOf(v)).toEqual([{ code: 'INVALID_REQUEST', holes: [] }]);
    });

    it('follows an UNIT_MISMATCH (floor ≠ truncator) that fired before it', () => {
      const b = session(unit, { truncatorUnit: other(unit) }).request('r', ru, 0, 11, 6);
      const { v } = decideLast(b);
      expect(reasonsOf(v)).toEqual([
        { code: 'UNIT_MISMATCH', holes: [] },
        { code: 'INVALID_REQUEST', holes: [] },
      ]);
      expect(v.rulesChecked).toEqual(TO_INVALID);
      expect(v.action).toBe('HALT');
    });
  });

  describe('FLOOR_NOT_IN_INPUT', () => {
    const pinned = { coverage: 'PINNED' as const };

    it('fires with hole [t−f, min(sIn,t)) = [4,5) for sIn 5, t 6 (PINNED isolates it)', () => {
      const { v, spill } = decideLast(session(unit, pinned).request('r', ru, 5, 6, 6));
      expect(reasonsOf(v)).toEqual([{ code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 5]] }]);
      expect(v.rulesChecked).toEqual(PINNED_RULES);
      expect(v.action).toBe('SPILL');
      expect(spill?.holes).toEqual([{ unit, start: 4, end: 5 }]);
    });

    it('under STRICT also fires EVICTED_UNCOVERED for the unsummarized [0,5)', () => {
      const { v } = decideLast(session(unit).request('r', ru, 5, 6, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 5]] },
        { code: 'EVICTED_UNCOVERED', holes: [[0, 5]] },
      ]);
    });

    it('is clipped at 0: t = 1, f = 2, sIn = 1 gives [0,1)', () => {
      const { v } = decideLast(session(unit, pinned).request('r', ru, 1, 1, 1));
      expect(reasonsOf(v)).toEqual([{ code: 'FLOOR_NOT_IN_INPUT', holes: [[0, 1]] }]);
    });

    it('is clipped at t: sIn = t = 6 gives [4,6)', () => {
      const { v } = decideLast(session(unit, pinned).request('r', ru, 6, 6, 6));
      expect(reasonsOf(v)).toEqual([{ code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 6]] }]);
    });

    it('does not fire when the input starts at t − f', () => {
      expect(decideLast(session(unit, pinned).request('r', ru, 4, 6, 6)).v.decision).toBe(
        'APPROVE',
      );
    });

    it('is healed by a spill of its hole (basis INVARIANT_HOLDS: [0,t) is not all spilled)', () => {
      const b = session(unit, pinned).spilled('x', unit, 4, 5).request('r', ru, 5, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    });

    it('is healed by an acknowledgement of its hole (basis LOSS_ACKNOWLEDGED)', () => {
      const b = session(unit, pinned).acknowledge(unit, 4, 5).request('r', ru, 5, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    });
  });

  describe('TRUNCATION_IN_FLOOR', () => {
    /** Compacted with a summary reaching [0,8): V = 2, S = [0,8). */
    const summarized = () => session(unit).request('c', ru, 0, 8, 2).commit('c', ru, 0, 8, 2);

    it('fires for a truncation inside [t−f, t) even where the summary covers it (the seed, literally)', () => {
      const b = summarized().truncate(unit, 4, 5).request('r', ru, 0, 6, 6);
      const { v } = decideLast(b);
      expect(reasonsOf(v)).toEqual([{ code: 'TRUNCATION_IN_FLOOR', holes: [[4, 5]] }]);
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
      expect(v.action).toBe('SPILL');
    });

    it('names only the part inside the floor: T = [3,5) gives [4,5)', () => {
      const b = summarized().truncate(unit, 3, 5).request('r', ru, 0, 6, 6);
      expect(reasonsOf(decideLast(b).v)).toEqual([
        { code: 'TRUNCATION_IN_FLOOR', holes: [[4, 5]] },
      ]);
    });

    it('does not fire for a covered truncation below the floor', () => {
      const b = summarized().truncate(unit, 2, 4).request('r', ru, 0, 6, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    });

    it('is healed by a spill of the truncated positions', () => {
      const b = summarized().truncate(unit, 4, 5).spilled('x', unit, 4, 5);
      expect(decideLast(b.request('r', ru, 0, 6, 6)).v.decision).toBe('APPROVE');
    });

    it('is healed by an acknowledgement of them (LOSS_ACKNOWLEDGED)', () => {
      const b = summarized().truncate(unit, 4, 5).acknowledge(unit, 4, 5);
      expect(decideLast(b.request('r', ru, 0, 6, 6)).v).toMatchObject({
        decision: 'APPROVE',
        basis: 'LOSS_ACKNOWLEDGED',
      });
    });
  });

  describe('SEAM_HOLE', () => {
    it('fires with hole [eIn, t) = [5,6) (PINNED isolates it)', () => {
      const b = session(unit, { coverage: 'PINNED' }).request('r', ru, 0, 5, 6);
      expect(reasonsOf(decideLast(b).v)).toEqual([{ code: 'SEAM_HOLE', holes: [[5, 6]] }]);
    });

    it('under STRICT the same positions leave unsummarized: EVICTED_UNCOVERED [5,6) too', () => {
      const { v } = decideLast(session(unit).request('r', ru, 0, 5, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'SEAM_HOLE', holes: [[5, 6]] },
        { code: 'EVICTED_UNCOVERED', holes: [[5, 6]] },
      ]);
    });

    it('does not fire when the input reaches beyond the tail start', () => {
      expect(decideLast(session(unit).request('r', ru, 0, 8, 6)).v.decision).toBe('APPROVE');
    });

    it('is healed by a spill of the seam', () => {
      const b = session(unit, { coverage: 'PINNED' })
        .spilled('x', unit, 5, 6)
        .request('r', ru, 0, 5, 6);
      expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
    });
  });

  describe('TAIL_BELOW_FLOOR', () => {
    it('fires when the tail starts inside the last f units: t = 9 gives [8,9)', () => {
      const { v } = decideLast(session(unit).request('r', ru, 0, 9, 9));
      expect(reasonsOf(v)).toEqual([{ code: 'TAIL_BELOW_FLOOR', holes: [[8, 9]] }]);
      expect(v.action).toBe('SPILL');
    });

    it('fires for a truncation inside the last f units: T = [9,10) (STRICT: uncovered too)', () => {
      const { v } = decideLast(session(unit).truncate(unit, 9, 10).request('r', ru, 0, 6, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'TAIL_BELOW_FLOOR', holes: [[9, 10]] },
        { code: 'EVICTED_UNCOVERED', holes: [[9, 10]] },
      ]);
      const pinned = session(unit, { coverage: 'PINNED' }).truncate(unit, 9, 10);
      expect(reasonsOf(decideLast(pinned.request('r', ru, 0, 6, 6)).v)).toEqual([
        { code: 'TAIL_BELOW_FLOOR', holes: [[9, 10]] },
      ]);
    });

    it('makes a session shorter than f unable to compact t > 0 without a spill', () => {
      const short = () => session(unit, {}, 1);
      const { v } = decideLast(short().request('r', ru, 0, 1, 1));
      expect(reasonsOf(v)).toEqual([{ code: 'TAIL_BELOW_FLOOR', holes: [[0, 1]] }]);
      expect(decideLast(short().request('r', ru, 0, 0, 0)).v.decision).toBe('APPROVE');
      const spilled = short().spilled('x', unit, 0, 1).request('r', ru, 0, 1, 1);
      expect(decideLast(spilled).v).toMatchObject({
        decision: 'APPROVE',
        basis: 'LOSSLESS_SPILL',
      });
    });

    it('does not fire when t = H′ − f', () => {
      expect(decideLast(session(unit).request('r', ru, 0, 8, 8)).v.decision).toBe('APPROVE');
    });

    it('is healed by a spill or an acknowledgement of its hole', () => {
      const s = session(unit).spilled('x', unit, 8, 9).request('r', ru, 0, 9, 9);
      expect(decideLast(s).v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
      const a = session(unit).acknowledge(unit, 8, 9).request('r', ru, 0, 9, 9);
      expect(decideLast(a).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    });
  });

  describe('EVICTED_PINNED and EVICTED_UNCOVERED', () => {
    /** Turn 1 carries a CONSTRAINT; [0,3) is truncated before any summary saw it. */
    const seedLike = (coverage: 'STRICT' | 'PINNED') =>
      new SessionBuilder(SID)
        .open(policyIn(unit, 2, { coverage }))
        .turn(1)
        .turn(1, 'USER', ['CONSTRAINT'])
        .turns(8, 1)
        .truncate(unit, 0, 3);

    it('PINNED: only EVICTED_PINNED fires, with the pinned hole [1,2); EVICTED_UNCOVERED not listed', () => {
      const { v } = decideLast(seedLike('PINNED').request('r', ru, 3, 6, 6));
      expect(reasonsOf(v)).toEqual([{ code: 'EVICTED_PINNED', holes: [[1, 2]] }]);
      expect(v.rulesChecked).toEqual(PINNED_RULES);
    });

    it('STRICT: EVICTED_PINNED [1,2) and EVICTED_UNCOVERED [0,3)', () => {
      const { v } = decideLast(seedLike('STRICT').request('r', ru, 3, 6, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'EVICTED_PINNED', holes: [[1, 2]] },
        { code: 'EVICTED_UNCOVERED', holes: [[0, 3]] },
      ]);
      expect(v.rulesChecked).toEqual([...ALL_RULES]);
    });

    it('an input starting at 0 does not help: the summarizer cannot have seen truncated positions', () => {
      const { v } = decideLast(seedLike('STRICT').request('r', ru, 0, 6, 6));
      expect(reasonsOf(v)).toEqual([
        { code: 'EVICTED_PINNED', holes: [[1, 2]] },
        { code: 'EVICTED_UNCOVERED', holes: [[0, 3]] },
      ]);
    });

    it('do not fire when the pinned content is summarized or stays in the tail', () => {
      const clean = new SessionBuilder(SID)
        .open(policyIn(unit, 2))
        .turn(1)
        .turn(1, 'USER', ['CONSTRAINT'])
        .turns(8, 1);
      expect(decideLast(clean.request('r', ru, 0, 6, 6)).v.decision).toBe('APPROVE');
      const tailPin = new SessionBuilder(SID)
        .open(policyIn(unit, 2, { coverage: 'PINNED' }))
        .turns(7, 1)
        .turn(1, 'USER', ['PLAN'])
        .turns(2, 1);
      expect(decideLast(tailPin.request('r', ru, 4, 6, 6)).v.decision).toBe('APPROVE');
    });

    it('PINNED: unpinned content dropped unsummarized is allowed; STRICT: EVICTED_UNCOVERED [0,2)', () => {
      const pinned = decideLast(session(unit, { coverage: 'PINNED' }).request('r', ru, 2, 6, 6));
      expect(pinned.v.decision).toBe('APPROVE');
      const strict = decideLast(session(unit).request('r', ru, 2, 6, 6));
      expect(reasonsOf(strict.v)).toEqual([{ code: 'EVICTED_UNCOVERED', holes: [[0, 2]] }]);
    });

    it('count tail positions truncated earlier that only the old summary covered', () => {
      // S = [0,8), V = 2; turn 3 pinned; [3,4) truncated (verbatim, covered by S).
      const b = new SessionBuilder(SID)
        .open(policyIn(unit, 2))
        .turns(3, 1)
        .turn(1, 'USER', ['COMMITMENT'])
        .turns(6, 1)
        .request('c', ru, 0, 8, 2)
        .commit('c', ru, 0, 8, 2)
        .truncate(unit, 3, 4)
        .request('r', ru, 0, 2, 2);
      expect(reasonsOf(decideLast(b).v)).toEqual([
        { code: 'EVICTED_PINNED', holes: [[3, 4]] },
        { code: 'EVICTED_UNCOVERED', holes: [[3, 4]] },
      ]);
    });

    it('are healed by a spill of the holes, and by an acknowledgement of them', () => {
      const s = seedLike('STRICT').spilled('x', unit, 0, 3).request('r', ru, 3, 6, 6);
      expect(decideLast(s).v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS' });
      const a = seedLike('PINNED').acknowledge(unit, 1, 2).request('r', ru, 3, 6, 6);
      expect(decideLast(a).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
      const partial = seedLike('STRICT').acknowledge(unit, 1, 2).request('r', ru, 3, 6, 6);
      expect(reasonsOf(decideLast(partial).v)).toEqual([
        {
          code: 'EVICTED_UNCOVERED',
          holes: [
            [0, 1],
            [2, 3],
          ],
        },
      ]);
    });
  });
});

describe('rules use positions in U, not turn indices (floor in TOKENS)', () => {
  it('names the pinned turn by its token range', () => {
    // Turns: [0,100) [100,150) pinned [150,400) then 7 × 100 tokens; head 1100.
    const b = new SessionBuilder(SID)
      .open(policyIn('TOKENS', 200, { coverage: 'PINNED' }))
      .turn(100)
      .turn(50, 'USER', ['CONSTRAINT'])
      .turn(250)
      .turns(7, 100)
      .truncate('TOKENS', 0, 400)
      .request('r', 'TOKENS', 400, 800, 800);
    const { v, spill } = decideLast(b);
    expect(v.reasons).toEqual([
      expect.objectContaining({
        code: 'EVICTED_PINNED',
        holes: [{ unit: 'TOKENS', start: 100, end: 150 }],
      }),
    ]);
    expect(spill?.range).toEqual({ start: 0, end: 1100 });
  });

  it('a floor of f tokens is measured in tokens: t = 1000 with f = 200 leaves [900,1000) below', () => {
    const b = new SessionBuilder(SID)
      .open(policyIn('TOKENS', 200))
      .turns(11, 100)
      .request('r', 'TOKENS', 0, 1000, 1000);
    expect(reasonsOf(decideLast(b).v)).toEqual([
      { code: 'TAIL_BELOW_FLOOR', holes: [[900, 1000]] },
    ]);
  });
});

describe('UNKNOWN_SESSION (no SessionOpened)', () => {
  const unknown = () => new SessionBuilder('ghost');

  it('t = 0 is healed: APPROVE INVARIANT_HOLDS, rulesChecked exactly [UNKNOWN_SESSION, INVALID_REQUEST]', () => {
    const { v } = decideLast(unknown().request('r', 'TURNS', 0, 5, 0));
    expect(v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS', reasons: [] });
    expect(v.rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
  });

  it.each(UNITS)(
    't > 0 is refused; the spill asks for [0, max(eIn,t)) in the request unit %s',
    (ru) => {
      const { v, spill } = decideLast(unknown().request('r', ru, 0, 7, 5));
      expect(reasonsOf(v)).toEqual([{ code: 'UNKNOWN_SESSION', holes: [] }]);
      expect(v.rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
      expect(v).toMatchObject({
        decision: 'REFUSE',
        action: 'SPILL',
        spillRequestId: 'ghost:r:0',
      });
      expect(spill).toMatchObject({ unit: ru, range: { start: 0, end: 7 }, holes: [] });
    },
  );

  it('is healed by a spill of [0,t) in the request unit (LOSSLESS_SPILL), not in another unit', () => {
    const b = unknown().spilled('x', 'TOKENS', 0, 5).request('r', 'MESSAGES', 0, 5, 5);
    expect(decideLast(b).v.decision).toBe('REFUSE');
    b.spilled('y', 'MESSAGES', 0, 5).request('r2', 'MESSAGES', 0, 5, 5);
    expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });

  it('is healed by an acknowledgement of [0,t) (LOSS_ACKNOWLEDGED) until the next truncation', () => {
    // The first request tells the session of TURNS [0,5) (its extent E), so the
    // acknowledgement is placed whole (rev 12).
    const b = unknown().request('r0', 'TURNS', 0, 5, 5).acknowledge('TURNS', 0, 5);
    b.request('r', 'TURNS', 0, 5, 5);
    expect(decideLast(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    b.truncate('TURNS', 0, 1).request('r2', 'TURNS', 0, 5, 5);
    expect(decideLast(b).v.decision).toBe('REFUSE');
  });

  it('checks INVALID_REQUEST as 0 ≤ sIn ≤ eIn: a reversed input HALTs', () => {
    const { v } = decideLast(unknown().request('r', 'TURNS', 5, 4, 5));
    expect(reasonsOf(v)).toEqual([
      { code: 'UNKNOWN_SESSION', holes: [] },
      { code: 'INVALID_REQUEST', holes: [] },
    ]);
    expect(v.action).toBe('HALT');
    const t0 = decideLast(unknown().request('r', 'TURNS', 5, 4, 0)).v;
    expect(reasonsOf(t0)).toEqual([{ code: 'INVALID_REQUEST', holes: [] }]);
    expect(t0.rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
  });

  it('does not bound positions by a head it does not know: t beyond anything seen is valid', () => {
    const { v } = decideLast(unknown().request('r', 'TURNS', 0, 500, 400));
    expect(reasonsOf(v)).toEqual([{ code: 'UNKNOWN_SESSION', holes: [] }]);
    expect(v.action).toBe('SPILL');
  });
});
