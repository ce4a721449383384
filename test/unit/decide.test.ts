/**
 * contract §5 after the rules: the basis of an APPROVE, the action of a REFUSE (SPILL vs HALT),
 * the spill request (id, range, holes, pending), and the verdict's stamps and diagnostic (§6).
 * Floor TURNS span 2, turns of one token/message, 10 turns unless said otherwise.
 */
import { ENGINE_VERSION, type Policy } from '../../src/engine';
import { SessionBuilder, seedIncident } from '../support/sessionBuilder';
import {
  auditsOf,
  play,
  policyIn,
  reasonsOf,
  spillOf,
  verdictOf,
  verdictsOf,
} from '../support/engineHarness';

const SID = 'sess';

function session(overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(turns, 1);
}

function lastOf(b: SessionBuilder) {
  const p = play(b.events);
  return { v: verdictOf(p.last), spill: spillOf(p.last), played: p };
}

/** The id the engine gives the spill request of the builder's last event (a request). */
function idOfLast(b: SessionBuilder): string {
  const e = b.last;
  if (e.type !== 'CompactionRequested') throw new Error('last event is not a request');
  return `${e.sessionId}:${e.requestId}:${e.seq}`;
}

describe('basis of an APPROVE', () => {
  it('INVARIANT_HOLDS for a normal compaction with nothing spilled or acknowledged', () => {
    expect(lastOf(session().request('r', 'TURNS', 0, 6, 6)).v.basis).toBe('INVARIANT_HOLDS');
  });

  it('LOSSLESS_SPILL when t > 0 and [0,t) ⊆ P, even if nothing needed healing', () => {
    const b = session().spilled('x', 'TURNS', 0, 6).request('r', 'TURNS', 0, 6, 6);
    expect(lastOf(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });

  it('INVARIANT_HOLDS, not LOSSLESS_SPILL, when [0,t) is only partly spilled', () => {
    const b = session().spilled('x', 'TURNS', 0, 5).request('r', 'TURNS', 0, 6, 6);
    expect(lastOf(b).v.basis).toBe('INVARIANT_HOLDS');
  });

  it('INVARIANT_HOLDS, not LOSSLESS_SPILL, when t = 0 however much is spilled', () => {
    const b = session().spilled('x', 'TURNS', 0, 10).request('r', 'TURNS', 0, 0, 0);
    expect(lastOf(b).v.basis).toBe('INVARIANT_HOLDS');
  });

  it('LOSS_ACKNOWLEDGED when the decision without A would refuse, even with [0,t) ⊆ P', () => {
    // [9,10) truncated before any summary: TAIL_BELOW_FLOOR and EVICTED_UNCOVERED at [9,10).
    const b = session()
      .truncate('TURNS', 9, 10)
      .spilled('x', 'TURNS', 0, 6)
      .acknowledge('TURNS', 9, 10)
      .request('r', 'TURNS', 0, 6, 6);
    expect(lastOf(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
  });

  it('not LOSS_ACKNOWLEDGED when the acknowledgement was not needed', () => {
    const b = session()
      .spilled('x', 'TURNS', 0, 6)
      .acknowledge('TURNS', 0, 6)
      .request('r', 'TURNS', 0, 6, 6);
    expect(lastOf(b).v.basis).toBe('LOSSLESS_SPILL');
  });

  it('is null on a REFUSE', () => {
    expect(lastOf(seedIncident()).v).toMatchObject({ decision: 'REFUSE', basis: null });
  });
});

describe('action of a REFUSE', () => {
  it('SPILL when spill is ENABLED, no spill failed and no hole meets X', () => {
    const { v, spill } = lastOf(seedIncident());
    expect(v.action).toBe('SPILL');
    expect(v.spillRequestId).toBe(spill?.spillRequestId);
  });

  it('HALT when the policy disables spills: no spill request, the diagnostic says why', () => {
    const b = session({ spill: 'DISABLED' }).request('r', 'TURNS', 0, 5, 6);
    const { v, spill } = lastOf(b);
    expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT', spillRequestId: null });
    expect(spill).toBeNull();
    expect(v.diagnostic).toMatch(/disabled/);
    expect(v.diagnostic).toContain('[5,6)');
  });

  it('HALT after SpillFailed for the pending request, until a non-empty SpillCompleted', () => {
    const b = session().request('r1', 'TURNS', 0, 5, 6);
    b.spillFailed(idOfLast(b)).request('r2', 'TURNS', 0, 5, 6);
    const halted = lastOf(b).v;
    expect(halted).toMatchObject({ decision: 'REFUSE', action: 'HALT', spillRequestId: null });
    expect(halted.diagnostic).toMatch(/spill failed/);
    // An empty range does not clear spill-failed.
    b.spilled('other', 'TURNS', 3, 3).request('r3', 'TURNS', 0, 5, 6);
    expect(lastOf(b).v.action).toBe('HALT');
    // A non-empty one does, whatever its id.
    b.spilled('other', 'TURNS', 0, 1).request('r4', 'TURNS', 0, 5, 6);
    expect(lastOf(b).v.action).toBe('SPILL');
  });

  it('HALT after SpillFailed until a LossAcknowledged (of any range)', () => {
    const b = session().request('r1', 'TURNS', 0, 5, 6);
    b.spillFailed(idOfLast(b)).acknowledge('TURNS', 0, 0).request('r2', 'TURNS', 0, 5, 6);
    expect(lastOf(b).v.action).toBe('SPILL');
  });

  it('a SpillFailed for another id is ignored: still SPILL', () => {
    const b = session().request('r1', 'TURNS', 0, 5, 6);
    b.spillFailed('sess:someone-else:1').request('r2', 'TURNS', 0, 5, 6);
    expect(lastOf(b).v.action).toBe('SPILL');
  });

  describe('unspillable X after SPILL_INCOMPLETE', () => {
    /** [0,3) truncated unsummarized (turn 1 pinned): refused, spill of [0,10) pending. */
    const refusedOnce = (policy: Partial<Policy> = {}) => {
      const b = new SessionBuilder(SID)
        .open(policyIn('TURNS', 2, policy))
        .turn(1)
        .turn(1, 'USER', ['CONSTRAINT'])
        .turns(8, 1)
        .truncate('TURNS', 0, 3)
        .request('r1', 'TURNS', 3, 6, 6);
      return { b, id: idOfLast(b) };
    };

    it('HALT when an unhealed hole meets X, with LossAcknowledged named as the way out', () => {
      const { b, id } = refusedOnce();
      b.spilled(id, 'TURNS', 0, 2).request('r2', 'TURNS', 3, 6, 6);
      const { v, spill, played } = lastOf(b);
      expect(auditsOf(played.outputs).map((a) => [a.code, a.ranges])).toContainEqual([
        'SPILL_INCOMPLETE',
        [{ unit: 'TURNS', start: 2, end: 10 }],
      ]);
      expect(reasonsOf(v)).toEqual([{ code: 'EVICTED_UNCOVERED', holes: [[2, 3]] }]);
      expect(v.action).toBe('HALT');
      expect(v.diagnostic).toMatch(/LossAcknowledged/);
      expect(spill).toBeNull();
      b.acknowledge('TURNS', 2, 3).request('r3', 'TURNS', 3, 6, 6);
      expect(lastOf(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    });

    it('SPILL when the unhealed holes lie outside X (content appended after the spill)', () => {
      const { b, id } = refusedOnce({ coverage: 'PINNED' });
      b.spilled(id, 'TURNS', 0, 3); // X = [3,10)
      b.turns(1, 1).turn(1, 'USER', ['PLAN']).turns(8, 1); // pin at 11, H = 20
      b.truncate('TURNS', 10, 12).request('r2', 'TURNS', 12, 16, 16);
      const { v } = lastOf(b);
      expect(reasonsOf(v)).toEqual([{ code: 'EVICTED_PINNED', holes: [[11, 12]] }]);
      expect(v.action).toBe('SPILL');
    });

    it('for a rule without a hole, [0,t) − (P ∪ A) meeting X makes it HALT', () => {
      const b = session({ truncatorUnit: 'TOKENS' }).request('r1', 'TURNS', 0, 6, 6);
      b.spilled(idOfLast(b), 'TURNS', 0, 4).request('r2', 'TURNS', 0, 6, 6); // X = [4,10)
      const { v } = lastOf(b);
      expect(reasonsOf(v)).toEqual([{ code: 'UNIT_MISMATCH', holes: [] }]);
      expect(v.action).toBe('HALT');
      // t = 4: [0,4) ⊆ P, the rule is healed.
      b.request('r3', 'TURNS', 0, 4, 4);
      expect(lastOf(b).v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
    });

    it('applies to unknown sessions in the request unit', () => {
      const b = new SessionBuilder('ghost').request('r1', 'TOKENS', 0, 5, 5);
      b.spilled(idOfLast(b), 'TOKENS', 0, 2).request('r2', 'TOKENS', 0, 5, 5);
      const { v, played } = lastOf(b);
      expect(auditsOf(played.outputs).map((a) => [a.code, a.ranges])).toContainEqual([
        'SPILL_INCOMPLETE',
        [{ unit: 'TOKENS', start: 2, end: 5 }],
      ]);
      expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT' });
    });
  });

  it('unknown sessions: SPILL by default, HALT after their spill failed', () => {
    const b = new SessionBuilder('ghost').request('r1', 'TURNS', 0, 5, 5);
    expect(lastOf(b).v.action).toBe('SPILL');
    b.spillFailed(idOfLast(b)).request('r2', 'TURNS', 0, 5, 5);
    expect(lastOf(b).v.action).toBe('HALT');
  });
});

describe('the spill request', () => {
  it('has id <sessionId>:<requestId>:<inputSeq>, the request eventId, range [0,H′) in U, the verdict reasons and stamps', () => {
    const b = seedIncident('inc-7');
    const req = b.last;
    const { v, spill } = lastOf(b);
    expect(v.requestEventId).toBe(req.eventId);
    expect(spill).toEqual({
      spillRequestId: `inc-7:compact-1:${req.seq}`,
      sessionId: 'inc-7',
      requestId: 'compact-1',
      requestEventId: req.eventId,
      unit: 'TURNS',
      range: { start: 0, end: 52 },
      holes: [{ unit: 'TURNS', start: 0, end: 8 }],
      reasons: v.reasons,
      requestedAt: req.occurredAt,
    });
  });

  it('holes are the union of the fired rules’ unhealed holes: [4,5) ∪ [5,6) = [4,6)', () => {
    const b = session({ coverage: 'PINNED' }).request('r', 'TURNS', 5, 5, 6);
    const { v, spill } = lastOf(b);
    expect(reasonsOf(v)).toEqual([
      { code: 'FLOOR_NOT_IN_INPUT', holes: [[4, 5]] },
      { code: 'SEAM_HOLE', holes: [[5, 6]] },
    ]);
    expect(spill?.holes).toEqual([{ unit: 'TURNS', start: 4, end: 6 }]);
  });

  it('names only unhealed holes: a spilled part is left out', () => {
    const b = session({ coverage: 'PINNED' })
      .spilled('x', 'TURNS', 4, 5)
      .request('r', 'TURNS', 5, 5, 6);
    expect(lastOf(b).spill?.holes).toEqual([{ unit: 'TURNS', start: 5, end: 6 }]);
  });

  it('asks for [0,H′) with H′ = Hg beyond H after a gap', () => {
    const b = session().truncate('TURNS', 12, 14).request('r', 'TURNS', 0, 6, 6);
    expect(lastOf(b).spill?.range).toEqual({ start: 0, end: 14 });
  });

  it('becomes the pending request: a later refusal replaces it', () => {
    const b = session().request('r1', 'TURNS', 0, 5, 6);
    const first = idOfLast(b);
    b.request('r2', 'TURNS', 0, 5, 6);
    const second = idOfLast(b);
    // The first id is no longer pending: its failure is ignored.
    b.spillFailed(first).request('r3', 'TURNS', 0, 5, 6);
    expect(lastOf(b).v.action).toBe('SPILL');
    const again = session().request('r1', 'TURNS', 0, 5, 6).request('r2', 'TURNS', 0, 5, 6);
    again.spillFailed(second).request('r3', 'TURNS', 0, 5, 6);
    expect(lastOf(again).v.action).toBe('HALT');
  });

  it('follows the verdict in the outputs; an APPROVE or HALT has none', () => {
    const { played } = lastOf(seedIncident());
    expect(played.last.outputs.map((o) => o.record)).toEqual(['verdict', 'spill-request']);
    const approve = lastOf(session().request('r', 'TURNS', 0, 6, 6));
    expect(approve.played.last.outputs.map((o) => o.record)).toEqual(['verdict']);
  });
});

describe('verdict stamps and diagnostic (contract §6)', () => {
  it('carry sessionId, requestId, inputSeq, requestedAt (occurredAt), decidedAt (clock), engineVersion', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    const req = b.last;
    const p = play(b.events, {}, (_e, i) => 5_000 + i);
    const [v] = verdictsOf(p.outputs);
    expect(v).toMatchObject({
      sessionId: SID,
      requestId: 'r',
      inputSeq: req.seq,
      requestedAt: req.occurredAt,
      decidedAt: 5_000 + b.events.length - 1,
      engineVersion: ENGINE_VERSION,
    });
  });

  it('a REFUSE diagnostic names every hole and says how to spill', () => {
    const { v } = lastOf(seedIncident());
    expect(v.diagnostic).toContain('[0,8)');
    expect(v.diagnostic).toContain('[0,52)');
    expect(v.diagnostic).toMatch(/^REFUSE \(SPILL\)/);
  });

  it('a HALT diagnostic names the holes and why no spill can help', () => {
    const b = new SessionBuilder(SID)
      .open(policyIn('TURNS', 2, { spill: 'DISABLED', coverage: 'PINNED' }))
      .turns(10, 1)
      .request('r', 'TURNS', 5, 5, 9);
    const { v } = lastOf(b);
    expect(reasonsOf(v)).toEqual([
      { code: 'SEAM_HOLE', holes: [[5, 9]] },
      { code: 'TAIL_BELOW_FLOOR', holes: [[8, 9]] },
    ]);
    expect(v.diagnostic).toMatch(/^REFUSE \(HALT\)/);
    expect(v.diagnostic).toContain('[5,9)');
    expect(v.diagnostic).toMatch(/No spill can help.*disabled/);
  });
});
