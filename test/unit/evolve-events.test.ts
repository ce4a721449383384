/**
 * contract §4 step 3, event by event: what each event does to the session state (T, S, V, P, A0,
 * A1, X, pins, heads, Hg, spill-failed, pending request) and which audit records it emits.
 * Floor TURNS span 2, turns of one token/message, 10 turns, unless said otherwise.
 */
import type { Policy } from '../../src/engine';
import { heads } from '../../src/engine/state';
import { rememberedIds } from '../../src/engine/sequence';
import { SessionBuilder, seedIncident } from '../support/sessionBuilder';
import {
  auditCodes,
  auditsOf,
  pairs,
  play,
  policyIn,
  reasonsOf,
  verdictOf,
} from '../support/engineHarness';

const SID = 'sess';

function session(overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(turns, 1);
}

/** Approved and committed with summary [0,8) and tail 4: S = [0,8), V = 4, T = ∅. */
function compacted(overrides: Partial<Policy> = {}): SessionBuilder {
  return session(overrides).request('c', 'TURNS', 0, 8, 4).commit('c', 'TURNS', 0, 8, 4);
}

describe('SessionOpened', () => {
  it('advises TRIGGER_NOT_BELOW_CEILING when trigger ≥ ceiling and UNIT_MISMATCH when units differ', () => {
    const p = play(
      new SessionBuilder(SID).open(
        policyIn('TURNS', 2, {
          triggerTokens: 160_000,
          ceilingTokens: 160_000,
          truncatorUnit: 'TOKENS',
        }),
      ).events,
    );
    expect(auditsOf(p.last.outputs).map((a) => [a.kind, a.code])).toEqual([
      ['ADVISORY', 'TRIGGER_NOT_BELOW_CEILING'],
      ['ADVISORY', 'UNIT_MISMATCH'],
    ]);
  });

  it('emits nothing for a trigger below the ceiling and matching units', () => {
    expect(play(new SessionBuilder(SID).open(policyIn('TURNS', 2)).events).last.outputs).toEqual(
      [],
    );
  });

  it('a second SessionOpened is ignored (counted): the first policy stays, no advisories', () => {
    const b = session();
    b.open(policyIn('TOKENS', 5, { triggerTokens: 200_000 }));
    const p = play(b.events);
    expect(p.last.outputs).toEqual([]);
    expect(p.last.notes).toContain('ignored');
    expect(p.state.policy?.floor).toEqual({ unit: 'TURNS', span: 2 });
  });

  it('discards the unknown session’s P, A1 and X but keeps its verdicts', () => {
    const b = new SessionBuilder(SID).request('r0', 'TURNS', 0, 0, 0); // approved (t = 0)
    b.spilled('x', 'TURNS', 0, 6).acknowledge('TURNS', 0, 6);
    b.open(policyIn('TURNS', 2, { truncatorUnit: 'TOKENS' })).turns(10, 1);
    const p = play(b.events);
    expect(p.state.spilled).toEqual({});
    expect(p.state.ackOnce).toEqual({});
    expect(p.state.unspillable).toEqual({});
    b.commit('r0', 'TURNS', 0, 0, 0).request('r1', 'TURNS', 0, 6, 6);
    const after = play(b.events);
    expect(auditCodes(after.steps[after.steps.length - 2]!.outputs)).toEqual([]);
    expect(reasonsOf(verdictOf(after.last))).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
  });
});

describe('TurnAppended', () => {
  it('is ignored without a policy', () => {
    const p = play(new SessionBuilder('ghost').turns(3, 1).events);
    expect(p.last.notes).toContain('ignored');
    expect(heads(p.state)).toEqual({ TURNS: 0, TOKENS: 0, MESSAGES: 0 });
  });

  it('moves the head in every unit to the turn’s end', () => {
    const b = new SessionBuilder(SID).open(policyIn('TOKENS', 100));
    b.turn(120, 'USER', [], 2).turn(80, 'ASSISTANT', [], 3);
    expect(heads(play(b.events).state)).toEqual({ TURNS: 2, TOKENS: 200, MESSAGES: 5 });
  });

  it('a pinned turn’s range in U joins the pins; adjacent pins merge', () => {
    const b = new SessionBuilder(SID).open(policyIn('TOKENS', 100));
    b.turn(100).turn(50, 'USER', ['CONSTRAINT']).turn(30, 'ASSISTANT', ['OPEN_TOOL_CALL']);
    b.turn(10).turn(5, 'ASSISTANT', ['COMMITMENT']);
    expect(pairs(play(b.events).state.pins)).toEqual([
      [100, 180],
      [190, 195],
    ]);
  });

  it('a turn not starting where the previous ended is a gap; the skipped positions in U are pinned', () => {
    const b = new SessionBuilder(SID).open(policyIn('TOKENS', 100)).turns(3, 100);
    b.turnAt(3, [500, 600], [3, 4]);
    const p = play(b.events);
    expect(p.last.notes).toContain('gap');
    expect(p.state.gapHead).toBe(600);
    expect(pairs(p.state.pins)).toEqual([[300, 500]]);
    expect(heads(p.state).TOKENS).toBe(600);
  });

  it('a turn index that skips is a gap even when the positions in U continue (nothing pinned)', () => {
    const b = new SessionBuilder(SID).open(policyIn('TOKENS', 100)).turns(3, 100);
    b.turnAt(5, [300, 400], [3, 4]);
    const p = play(b.events);
    expect(p.state.gapHead).toBe(400);
    expect(p.state.pins).toEqual([]);
    expect(heads(p.state).TURNS).toBe(6);
  });

  it('a discontinuity in another unit is a gap too, but pins nothing in U', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).turns(3, 1);
    b.turnAt(3, [3, 4], [7, 8]);
    const p = play(b.events);
    expect(p.state.gapHead).toBe(4);
    expect(p.state.pins).toEqual([]);
  });

  it('a first turn not at 0 is a gap and pins [0, its start)', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).turnAt(4, [4, 5], [4, 5]);
    const p = play(b.events);
    expect(p.state.gapHead).toBe(5);
    expect(pairs(p.state.pins)).toEqual([[0, 4]]);
  });

  it('"previous" is the turn appended last: a turn continuing a discontinuous one is no new gap', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).turns(3, 1);
    b.turnAt(6, [6, 7], [6, 7]).turns(1, 1);
    const p = play(b.events);
    expect(p.last.notes).not.toContain('gap');
    expect(p.state.gapHead).toBe(7);
    expect(heads(p.state).TURNS).toBe(8);
  });

  it('a turn going back is a gap; heads never go down', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).turns(5, 1);
    b.turnAt(2, [2, 3], [2, 3]);
    const p = play(b.events);
    expect(p.state.gapHead).toBe(5);
    expect(heads(p.state)).toEqual({ TURNS: 5, TOKENS: 5, MESSAGES: 5 });
    expect(p.state.pins).toEqual([]);
  });

  it('skipped positions count as pins for EVICTED_PINNED (fail closed)', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2, { coverage: 'PINNED' }));
    b.turns(2, 1).turnAt(3, [3, 4], [3, 4]).turns(6, 1); // [2,3) skipped, H = 10, Hg = 4
    b.spilled('x', 'TURNS', 0, 4).truncate('TURNS', 0, 4).request('r', 'TURNS', 4, 6, 6);
    const v = verdictOf(play(b.events).last);
    expect(v.decision).toBe('APPROVE'); // the spill covers the skipped position and the gap
    const unspilled = new SessionBuilder(SID).open(policyIn('TURNS', 2, { coverage: 'PINNED' }));
    unspilled.turns(2, 1).turnAt(3, [3, 4], [3, 4]).turns(6, 1);
    unspilled.acknowledge('TURNS', 0, 4).truncate('TURNS', 0, 4).request('r', 'TURNS', 4, 6, 6);
    // The acknowledgement wrote the gap off but A1 expired with the truncation; the skipped
    // position [2,3) was not lost when acknowledged, so it is not in A0 either.
    expect(reasonsOf(verdictOf(play(unspilled.events).last))).toEqual([
      { code: 'EVICTED_PINNED', holes: [[2, 3]] },
    ]);
  });
});

describe('Truncated', () => {
  it('is ignored without a policy', () => {
    const p = play(new SessionBuilder('ghost').truncate('TURNS', 0, 3).events);
    expect(p.last.notes).toContain('ignored');
    expect(p.last.outputs).toEqual([]);
  });

  it('in another unit: VIOLATION UNPLACEABLE_RANGE naming the range, a gap (Hg = H), T unchanged', () => {
    const p = play(session().truncate('TOKENS', 0, 3).events);
    const [a] = auditsOf(p.last.outputs);
    expect(a).toMatchObject({
      kind: 'VIOLATION',
      code: 'UNPLACEABLE_RANGE',
      ranges: [{ unit: 'TOKENS', start: 0, end: 3 }],
    });
    expect(p.state.gapHead).toBe(10);
    expect(p.state.truncated).toEqual([]);
  });

  it('reaching beyond H′ is a gap raising Hg to the range’s end', () => {
    const p = play(session().truncate('TURNS', 8, 13).events);
    expect(p.last.notes).toContain('gap');
    expect(p.state.gapHead).toBe(13);
    expect(pairs(p.state.truncated)).toEqual([[8, 13]]);
  });

  it('within H′ is no gap', () => {
    const p = play(session().truncate('TURNS', 8, 10).events);
    expect(p.state.gapHead).toBeNull();
  });

  it.each(['BUDGET_ENFORCEMENT', 'MANUAL'] as const)(
    '%s: T ∪= range; S −= range ∩ [0,V)',
    (reason) => {
      const p = play(compacted().truncate('TURNS', 2, 6, reason).events);
      expect(pairs(p.state.truncated)).toEqual([[2, 6]]);
      expect(pairs(p.state.summary)).toEqual([
        [0, 2],
        [4, 8],
      ]);
    },
  );

  it('SUMMARY_EVICTED: S −= range; T ∪= range ∩ [0,V) (positions at or above V stay verbatim)', () => {
    const p = play(compacted().truncate('TURNS', 2, 6, 'SUMMARY_EVICTED').events);
    expect(pairs(p.state.summary)).toEqual([
      [0, 2],
      [6, 8],
    ]);
    expect(pairs(p.state.truncated)).toEqual([[2, 4]]);
  });

  it('SUMMARY_EVICTED below V leaves those positions uncovered at the next request', () => {
    const b = compacted().truncate('TURNS', 0, 2, 'SUMMARY_EVICTED').request('r', 'TURNS', 0, 6, 6);
    expect(reasonsOf(verdictOf(play(b.events).last))).toEqual([
      { code: 'EVICTED_UNCOVERED', holes: [[0, 2]] },
    ]);
  });

  it('expires the one-compaction acceptance A1', () => {
    const b = session().acknowledge('TURNS', 4, 5).truncate('TURNS', 9, 9);
    const p = play(b.events);
    expect(p.state.ackOnce).toEqual({});
    b.request('r', 'TURNS', 5, 6, 6);
    expect(reasonsOf(verdictOf(play(b.events).last))).toContainEqual({
      code: 'FLOOR_NOT_IN_INPUT',
      holes: [[4, 5]],
    });
  });

  it('expires A1 of an unknown session too', () => {
    const b = new SessionBuilder('ghost').acknowledge('TURNS', 0, 5).truncate('TURNS', 0, 1);
    expect(play(b.events).state.ackOnce).toEqual({});
  });

  describe('early-warning advisories', () => {
    it('PINNED_EVICTED names the lost pinned positions (the seed’s incident starts here)', () => {
      const b = seedIncident();
      b.events.pop(); // drop the request: the truncation is the last event but 4 turns
      const p = play(b.events);
      const a = auditsOf(p.outputs).find((x) => x.code === 'PINNED_EVICTED');
      expect(a).toMatchObject({ kind: 'ADVISORY', ranges: [{ unit: 'TURNS', start: 1, end: 3 }] });
      expect(auditCodes(p.outputs)).not.toContain('CONTENT_EVICTED');
    });

    it('CONTENT_EVICTED names lost unpinned positions, under STRICT only', () => {
      const strict = play(session().truncate('TURNS', 4, 6).events);
      expect(auditsOf(strict.last.outputs)).toEqual([
        expect.objectContaining({
          kind: 'ADVISORY',
          code: 'CONTENT_EVICTED',
          ranges: [{ unit: 'TURNS', start: 4, end: 6 }],
        }),
      ]);
      const pinned = play(session({ coverage: 'PINNED' }).truncate('TURNS', 4, 6).events);
      expect(pinned.last.outputs).toEqual([]);
    });

    it('PINNED_EVICTED under PINNED coverage too', () => {
      const b = new SessionBuilder(SID).open(policyIn('TURNS', 2, { coverage: 'PINNED' }));
      b.turn(1).turn(1, 'USER', ['PLAN']).turns(3, 1).truncate('TURNS', 0, 3);
      expect(auditCodes(play(b.events).last.outputs)).toEqual(['PINNED_EVICTED']);
    });

    it('nothing is advised for positions the summary, a spill or a write-off (A0) still covers', () => {
      const covered = play(compacted().truncate('TURNS', 5, 7).events);
      expect(covered.last.outputs).toEqual([]);
      const spilled = play(session().spilled('x', 'TURNS', 0, 10).truncate('TURNS', 4, 6).events);
      expect(spilled.last.outputs).toEqual([]);
      const b = session().truncate('TURNS', 4, 6).acknowledge('TURNS', 4, 6);
      const again = play(b.truncate('TURNS', 4, 6).events);
      expect(again.last.outputs).toEqual([]);
    });

    it('an acknowledgement does not pre-accept a later loss of content still present', () => {
      const b = session().acknowledge('TURNS', 0, 10).truncate('TURNS', 0, 3);
      const p = play(b.events);
      expect(auditCodes(p.last.outputs)).toEqual(['CONTENT_EVICTED']);
      b.request('r', 'TURNS', 3, 6, 6);
      expect(reasonsOf(verdictOf(play(b.events).last))).toEqual([
        { code: 'EVICTED_UNCOVERED', holes: [[0, 3]] },
      ]);
    });
  });
});

describe('CompactionCommitted', () => {
  describe('the audit', () => {
    it('no stored verdict: VIOLATION COMMITTED_WITHOUT_APPROVAL with the requestId', () => {
      const p = play(session().commit('nope', 'TURNS', 0, 6, 6).events);
      expect(auditsOf(p.last.outputs)).toEqual([
        expect.objectContaining({
          kind: 'VIOLATION',
          code: 'COMMITTED_WITHOUT_APPROVAL',
          requestId: 'nope',
        }),
      ]);
    });

    it('a refused request: COMMITTED_WITHOUT_APPROVAL', () => {
      const b = session().request('r', 'TURNS', 0, 5, 6).commit('r', 'TURNS', 0, 5, 6);
      expect(auditCodes(play(b.events).last.outputs)).toEqual(['COMMITTED_WITHOUT_APPROVAL']);
    });

    it('ranges differing from the approved request: COMMITTED_WITHOUT_APPROVAL', () => {
      const b = session().request('r', 'TURNS', 0, 6, 6).commit('r', 'TURNS', 0, 7, 6);
      expect(auditCodes(play(b.events).last.outputs)).toEqual(['COMMITTED_WITHOUT_APPROVAL']);
    });

    it('an approved request committed as approved, still approvable: no audit', () => {
      const b = session().request('r', 'TURNS', 0, 6, 6).commit('r', 'TURNS', 0, 6, 6);
      expect(play(b.events).last.outputs).toEqual([]);
    });

    it('approved but refused on the state at commit: VIOLATION APPROVAL_STALE_AT_COMMIT', () => {
      const b = session().request('r', 'TURNS', 0, 6, 6).truncate('TURNS', 5, 6);
      b.commit('r', 'TURNS', 0, 6, 6);
      const [a] = auditsOf(play(b.events).last.outputs);
      expect(a).toMatchObject({ kind: 'VIOLATION', code: 'APPROVAL_STALE_AT_COMMIT' });
      expect(a?.ranges).toContainEqual({ unit: 'TURNS', start: 5, end: 6 });
    });

    it('a commit in another unit: COMMITTED_WITHOUT_APPROVAL, then UNPLACEABLE_RANGE and a gap; state unchanged', () => {
      const b = session().request('r', 'TOKENS', 0, 6, 6).commit('r', 'TOKENS', 0, 6, 6);
      const p = play(b.events);
      expect(auditCodes(p.last.outputs)).toEqual([
        'COMMITTED_WITHOUT_APPROVAL',
        'UNPLACEABLE_RANGE',
      ]);
      expect(p.state).toMatchObject({ gapHead: 10, verbatimStart: 0, truncated: [], summary: [] });
    });

    it('an unknown session’s approved commit is audited, and only A1 changes', () => {
      // Three turns tell the unknown session of TURNS [0,3) (its extent E), so the
      // acknowledgement is placed whole.
      const b = new SessionBuilder('ghost').turns(3).acknowledge('TURNS', 0, 3);
      b.request('r', 'TURNS', 0, 3, 3).commit('r', 'TURNS', 0, 3, 3);
      const p = play(b.events);
      expect(p.last.outputs).toEqual([]);
      expect(p.state.ackOnce).toEqual({});
      expect(p.state.verbatimStart).toBe(0);
    });
  });

  describe('the state follows the commit (positions clipped to H′)', () => {
    it('I = [sIn,eIn) − (T − S); T ∪= [0,max(t′,V)) − I; S := I; V := t′', () => {
      const b = session().truncate('TURNS', 0, 2).commit('x', 'TURNS', 0, 8, 6);
      const s = play(b.events).state;
      expect(pairs(s.summary)).toEqual([[2, 8]]);
      expect(pairs(s.truncated)).toEqual([[0, 2]]);
      expect(s.verbatimStart).toBe(6);
    });

    it('positions below sIn are dropped: T ∪= [0,sIn)', () => {
      const s = play(session().commit('x', 'TURNS', 3, 8, 6).events).state;
      expect(pairs(s.truncated)).toEqual([[0, 3]]);
      expect(pairs(s.summary)).toEqual([[3, 8]]);
    });

    it('clips t and eIn to H′: t′ = min(t, H′)', () => {
      const s = play(session().commit('x', 'TURNS', 0, 12, 12).events).state;
      expect(s.verbatimStart).toBe(10);
      expect(pairs(s.summary)).toEqual([[0, 10]]);
      expect(s.truncated).toEqual([]);
    });

    it('V only moves forward; a tail below V still drops what the summary leaves out below V', () => {
      const b = compacted().commit('y', 'TURNS', 1, 8, 2);
      const s = play(b.events).state;
      expect(s.verbatimStart).toBe(4);
      expect(pairs(s.truncated)).toEqual([[0, 1]]);
      expect(pairs(s.summary)).toEqual([[1, 8]]);
    });

    it('the new summary replaces the old: what it does not cover below the tail is gone', () => {
      const b = compacted().commit('y', 'TURNS', 6, 9, 7);
      const s = play(b.events).state;
      expect(pairs(s.summary)).toEqual([[6, 9]]);
      expect(pairs(s.truncated)).toEqual([[0, 6]]);
      expect(s.verbatimStart).toBe(7);
    });

    it('a summary fed an earlier summary keeps accounting for truncated positions S covers', () => {
      // S = [0,8), V = 4; [5,7) truncated while verbatim (S still covers it).
      const b = compacted().truncate('TURNS', 5, 7).commit('y', 'TURNS', 0, 9, 7);
      const s = play(b.events).state;
      expect(pairs(s.summary)).toEqual([[0, 9]]);
      expect(pairs(s.truncated)).toEqual([[5, 7]]);
    });

    it('uses up the one-compaction acceptance A1', () => {
      const b = session().acknowledge('TURNS', 4, 5).commit('x', 'TURNS', 0, 2, 2);
      expect(play(b.events).state.ackOnce).toEqual({});
    });
  });
});

describe('SpillCompleted', () => {
  it('P ∪= range ∩ [0,H′)', () => {
    const p = play(session().spilled('x', 'TURNS', 3, 50).events);
    expect(pairs(p.state.spilled.TURNS)).toEqual([[3, 10]]);
    expect(p.state.gapHead).toBeNull();
  });

  it('H′ is as step 2 left it: a gap-revealing spill is clipped to the raised Hg', () => {
    const p = play(session().skipSeq().spilled('x', 'TURNS', 0, 14).events);
    expect(pairs(p.state.spilled.TURNS)).toEqual([[0, 14]]);
  });

  it('unknown session: the range clipped to its extent E, per unit (rev 12)', () => {
    // Two turns of 100 tokens and one message each: E = TOKENS 200, MESSAGES 2.
    const b = new SessionBuilder('ghost').turns(2).spilled('x', 'TOKENS', 0, 500);
    b.spilled('y', 'MESSAGES', 1, 4);
    const s = play(b.events).state;
    expect(s.spilled).toEqual({ TOKENS: [0, 200], MESSAGES: [1, 2] });
  });

  it('unknown session told of nothing: a spill places nothing (a signed answer to a forged request cannot pre-heal)', () => {
    const b = new SessionBuilder('ghost').spilled('x', 'TURNS', 0, 4_503_599_627_370_495);
    const s = play(b.events).state;
    expect(s.spilled).toEqual({ TURNS: [] });
  });

  it('unknown session: a request that advanced it extends E to max(summaryInput.end, tailStart)', () => {
    const b = new SessionBuilder('ghost').request('r', 'TURNS', 0, 7, 9);
    b.outOfBand().spilled(`ghost:r:0`, 'TURNS', 0, 50);
    const s = play(b.events).state;
    expect(s.extent).toEqual({ TURNS: 9, TOKENS: 0, MESSAGES: 0 });
    expect(s.spilled).toEqual({ TURNS: [0, 9] });
  });

  it('in another unit: UNPLACEABLE_RANGE, otherwise ignored (P, pending and spill-failed unchanged)', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const id = `${SID}:r:${b.last.seq}`;
    b.spilled(id, 'TOKENS', 0, 10);
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['UNPLACEABLE_RANGE']);
    expect(p.state.spilled).toEqual({});
    expect(p.state.pendingSpill?.id).toBe(id);
  });

  it('for the pending id, a full spill clears the pending request with no violation', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    b.spilled(`${SID}:r:${b.last.seq}`, 'TURNS', 0, 10);
    const p = play(b.events);
    expect(p.last.outputs).toEqual([]);
    expect(p.state.pendingSpill).toBeNull();
    expect(p.state.unspillable).toEqual({});
  });

  it('for the pending id, the requested part not stored joins X with VIOLATION SPILL_INCOMPLETE', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const id = `${SID}:r:${b.last.seq}`;
    b.spilled(id, 'TURNS', 2, 7);
    const p = play(b.events);
    const [a] = auditsOf(p.last.outputs);
    expect(a).toMatchObject({
      kind: 'VIOLATION',
      code: 'SPILL_INCOMPLETE',
      ranges: [
        { unit: 'TURNS', start: 0, end: 2 },
        { unit: 'TURNS', start: 7, end: 10 },
      ],
    });
    expect(pairs(p.state.unspillable.TURNS)).toEqual([
      [0, 2],
      [7, 10],
    ]);
    expect(pairs(p.state.spilled.TURNS)).toEqual([[2, 7]]);
    expect(p.state.pendingSpill).toBeNull();
  });

  it('another id does not touch the pending request or X', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    b.spilled('unrelated', 'TURNS', 0, 3);
    const p = play(b.events);
    expect(p.last.outputs).toEqual([]);
    expect(p.state.pendingSpill).not.toBeNull();
    expect(p.state.unspillable).toEqual({});
  });

  it('after the pending request failed, its late SpillCompleted adds to P without SPILL_INCOMPLETE', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const id = `${SID}:r:${b.last.seq}`;
    b.spillFailed(id).spilled(id, 'TURNS', 0, 3);
    const p = play(b.events);
    expect(p.last.outputs).toEqual([]);
    expect(pairs(p.state.spilled.TURNS)).toEqual([[0, 3]]);
    expect(p.state.spillFailed).toBe(false);
  });
});

describe('SpillFailed', () => {
  it('for the pending id: spill-failed, pending request cleared', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    b.spillFailed(`${SID}:r:${b.last.seq}`);
    const p = play(b.events);
    expect(p.state.spillFailed).toBe(true);
    expect(p.state.pendingSpill).toBeNull();
    expect(p.last.outputs).toEqual([]);
  });

  it('for any other id: ignored (counted)', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6).spillFailed('other');
    const p = play(b.events);
    expect(p.last.notes).toContain('ignored');
    expect(p.state.spillFailed).toBe(false);
    expect(p.state.pendingSpill).not.toBeNull();
  });
});

describe('LossAcknowledged', () => {
  it('emits ADVISORY LOSS_ACKNOWLEDGED with the range clipped to H′', () => {
    const p = play(session().acknowledge('TURNS', 4, 50).events);
    expect(auditsOf(p.last.outputs)).toEqual([
      expect.objectContaining({
        kind: 'ADVISORY',
        code: 'LOSS_ACKNOWLEDGED',
        ranges: [{ unit: 'TURNS', start: 4, end: 10 }],
      }),
    ]);
    expect(pairs(p.state.ackOnce.TURNS)).toEqual([[4, 10]]);
  });

  it('in another unit: UNPLACEABLE_RANGE, no advisory, nothing acknowledged', () => {
    const p = play(session().acknowledge('TOKENS', 0, 5).events);
    expect(auditCodes(p.last.outputs)).toEqual(['UNPLACEABLE_RANGE']);
    expect(p.state.ackOnce).toEqual({});
  });

  it('(1) writes off what is already lost, range ∩ (T − (S ∪ P)), into A0 for good', () => {
    const b = session().truncate('TURNS', 0, 4).spilled('x', 'TURNS', 1, 2);
    b.acknowledge('TURNS', 0, 6);
    const s = play(b.events).state;
    expect(pairs(s.ackPermanent)).toEqual([
      [0, 1],
      [2, 4],
    ]);
    expect(pairs(s.ackOnce.TURNS)).toEqual([[0, 6]]);
  });

  it('(1) A0 survives the next commit and truncation and keeps healing (basis LOSS_ACKNOWLEDGED)', () => {
    const b = session({ coverage: 'PINNED' });
    b.truncate('TURNS', 0, 3).acknowledge('TURNS', 0, 3);
    b.request('c', 'TURNS', 3, 4, 4).commit('c', 'TURNS', 3, 4, 4).truncate('TURNS', 9, 9);
    // [0,3) dropped unsummarized; with a pin it would fire EVICTED_PINNED but A0 heals it.
    b.request('r', 'TURNS', 3, 6, 6);
    const p = play(b.events);
    expect(p.state.ackOnce).toEqual({});
    expect(pairs(p.state.ackPermanent)).toEqual([[0, 3]]);
    const strict = session().truncate('TURNS', 0, 3).acknowledge('TURNS', 0, 3);
    strict.truncate('TURNS', 9, 9).request('r', 'TURNS', 3, 6, 6);
    expect(verdictOf(play(strict.events).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSS_ACKNOWLEDGED',
    });
  });

  it('(2) a range covering [0,Hg) writes the gap off and re-bases the sequence on this event', () => {
    const b = session().skipSeq(2).turns(2, 1); // Hg = 11
    const early = b.events[3]!;
    b.acknowledge('TURNS', 0, 12);
    const ackSeq = b.last.seq;
    const p = play(b.events);
    expect(p.state.gapHead).toBeNull();
    expect(p.state.lastSeq).toBe(ackSeq);
    expect(rememberedIds(p.state).seqs).toEqual([ackSeq]);
    // No EVENT_GAP any more; the acknowledgement itself was not needed: INVARIANT_HOLDS.
    b.request('r', 'TURNS', 0, 6, 6);
    expect(verdictOf(play(b.events).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'INVARIANT_HOLDS',
    });
    // Remembered eventIds are just its own: an older redelivery is now a conflict.
    const redelivered = play([...b.events, early]);
    expect(auditCodes(redelivered.last.outputs)).toEqual(['SEQ_CONFLICT']);
  });

  it('(2) a range not covering [0,Hg) leaves the gap', () => {
    const b = session().skipSeq().turns(1, 1).acknowledge('TURNS', 1, 11);
    expect(play(b.events).state.gapHead).toBe(11);
  });

  it('(3) the whole range becomes A1, replacing any earlier A1', () => {
    const b = session({ coverage: 'PINNED' })
      .acknowledge('TURNS', 4, 5)
      .acknowledge('TURNS', 0, 1)
      .request('r', 'TURNS', 5, 6, 6);
    const p = play(b.events);
    expect(pairs(p.state.ackOnce.TURNS)).toEqual([[0, 1]]);
    expect(reasonsOf(verdictOf(p.last))).toEqual([{ code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 5]] }]);
  });

  it('(3) A1 lets one compaction through: the next commit uses it up', () => {
    const b = session({ coverage: 'PINNED' }).acknowledge('TURNS', 4, 5);
    b.request('r1', 'TURNS', 5, 6, 6).commit('r1', 'TURNS', 5, 6, 6);
    b.request('r2', 'TURNS', 5, 6, 6);
    const p = play(b.events);
    expect(verdictOf(p.steps[p.steps.length - 3]!)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSS_ACKNOWLEDGED',
    });
    expect(p.state.ackOnce).toEqual({});
    // [4,5) was still present when acknowledged: not written off (A0), so it counts again.
    expect(reasonsOf(verdictOf(p.last))).toEqual([
      { code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 5]] },
      { code: 'TRUNCATION_IN_FLOOR', holes: [[4, 5]] },
    ]);
  });

  it('clears spill-failed and leaves the pending request and X unchanged', () => {
    const failed = session().request('r1', 'TURNS', 0, 5, 6);
    failed.spillFailed(`${SID}:r1:${failed.last.seq}`);
    expect(play(failed.events).state.spillFailed).toBe(true);
    expect(play(failed.acknowledge('TURNS', 0, 0).events).state.spillFailed).toBe(false);

    const incomplete = session().request('r1', 'TURNS', 0, 5, 6);
    incomplete.spilled(`${SID}:r1:${incomplete.last.seq}`, 'TURNS', 0, 4); // X = [4,10)
    incomplete.acknowledge('TURNS', 0, 10);
    expect(pairs(play(incomplete.events).state.unspillable.TURNS)).toEqual([[4, 10]]);

    const pending = session().request('r', 'TURNS', 0, 5, 6);
    const id = `${SID}:r:${pending.last.seq}`;
    pending.acknowledge('TURNS', 0, 2);
    expect(play(pending.events).state.pendingSpill?.id).toBe(id);
  });

  it('unknown sessions: only A1 applies, clipped to the extent E (rev 12); advisory emitted', () => {
    const p = play(new SessionBuilder('ghost').turns(3).acknowledge('MESSAGES', 0, 40).events);
    expect(p.state.ackOnce).toEqual({ MESSAGES: [0, 3] });
    expect(p.state.ackPermanent).toEqual([]);
    expect(auditCodes(p.last.outputs)).toEqual(['LOSS_ACKNOWLEDGED']);
  });
});
