/**
 * Where the contract (docs/contract.md) leaves a choice open, these tests pin down the reading the engine takes, so a
 * change of reading is a visible, deliberate change. Each test quotes the contract text it reads.
 * Floor TURNS span 2, turns of one unit each.
 */
import type { Policy } from '../../src/engine';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditCodes, play, policyIn, reasonsOf, verdictOf } from '../support/engineHarness';

const SID = 'sess';

function session(overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(turns, 1);
}

describe('readings of contract text that allows more than one', () => {
  it('"the verdicts of the last 16 requestIds": a repeated request counts as recent again', () => {
    const b = session().request('r0', 'TURNS', 0, 6, 6);
    for (let i = 1; i <= 15; i++) b.request(`r${i}`, 'TURNS', 0, 6, 6);
    b.request('r0', 'TURNS', 0, 6, 6); // answered from the store, and now the most recent
    b.request('r16', 'TURNS', 0, 6, 6); // evicts r1, not r0
    b.commit('r0', 'TURNS', 0, 6, 6);
    expect(play(b.events).last.outputs).toEqual([]);
  });

  it('"those ... are discarded when a policy arrives": only P, A1 and X; spill-failed and the pending request stay', () => {
    const pending = new SessionBuilder(SID).request('r', 'TURNS', 0, 5, 5);
    pending.open(policyIn('TURNS', 2)).turns(10, 1);
    expect(play(pending.events).state.pendingSpill?.id).toBe(`${SID}:r:0`);

    const failed = new SessionBuilder(SID).request('r', 'TURNS', 0, 5, 5);
    failed.spillFailed(`${SID}:r:0`).open(policyIn('TURNS', 2)).turns(10, 1);
    expect(play(failed.events).state.spillFailed).toBe(true);
    failed.request('k', 'TURNS', 0, 5, 6);
    expect(verdictOf(play(failed.events).last).action).toBe('HALT');
  });

  it('"A range reaching beyond H′ names turns we have not seen": an empty range at 12 > H′ = 10 raises Hg too', () => {
    const p = play(session().truncate('TURNS', 12, 12).events);
    expect(p.state.gapHead).toBe(12);
  });

  it('"the sequence is re-based on this event": a conflicting acknowledgement re-bases to its lower seq, so the next in-order event reveals a gap again', () => {
    const b = session().skipSeq().turns(1, 1); // Hg = 11, last seq 12
    b.next({ seq: 5, eventId: 'late-ack' }).acknowledge('TURNS', 0, 20);
    const acked = play(b.events).state;
    expect(acked.gapHead).toBeNull();
    expect(acked.lastSeq).toBe(5);
    b.turns(1, 1); // seq 13
    expect(play(b.events).state.gapHead).toBe(12);
  });

  it('"the eventIds of the 32 highest seqs accepted": an applied conflicting SpillCompleted is not remembered, its redelivery conflicts again', () => {
    const b = session();
    b.next({ seq: 3, eventId: 'spill-x' }).spilled('x', 'TURNS', 0, 4);
    const spill = b.last;
    const p = play([...b.events, spill]);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
  });

  it('"Basis LOSS_ACKNOWLEDGED if the same decision with A left out would REFUSE": a gap written off by the acknowledgement gives INVARIANT_HOLDS', () => {
    const b = session().skipSeq().acknowledge('TURNS', 0, 10).request('r', 'TURNS', 0, 6, 6);
    expect(verdictOf(play(b.events).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'INVARIANT_HOLDS',
    });
  });

  it('"LOSSLESS_SPILL if t > 0 and [0,t) ⊆ P": a hole healed by a partial spill gives INVARIANT_HOLDS', () => {
    const b = session({ coverage: 'PINNED' }).spilled('x', 'TURNS', 4, 5);
    b.request('r', 'TURNS', 5, 6, 6);
    expect(verdictOf(play(b.events).last).basis).toBe('INVARIANT_HOLDS');
  });

  it('"a readable sentence naming every hole": the diagnostic names each fired rule with its own holes', () => {
    const b = new SessionBuilder(SID)
      .open(policyIn('TURNS', 2))
      .turn(1)
      .turn(1, 'USER', ['CONSTRAINT'])
      .turns(8, 1)
      .truncate('TURNS', 0, 3)
      .request('r', 'TURNS', 3, 6, 6);
    const v = verdictOf(play(b.events).last);
    expect(reasonsOf(v)).toEqual([
      { code: 'EVICTED_PINNED', holes: [[1, 2]] },
      { code: 'EVICTED_UNCOVERED', holes: [[0, 3]] },
    ]);
    expect(v.diagnostic).toContain('EVICTED_PINNED at TURNS [1,2)');
    expect(v.diagnostic).toContain('EVICTED_UNCOVERED at TURNS [0,3)');
    expect(v.reasons[0]!.message).toContain('[1,2)');
  });

  it('"A non-empty range sets spill-failed := false": the reported range counts, even when clipped to nothing', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    b.spillFailed(`${SID}:r:${b.last.seq}`).spilled('late', 'TURNS', 30, 40);
    const s = play(b.events).state;
    expect(s.spillFailed).toBe(false);
    expect(s.spilled).toEqual({ TURNS: [] });
  });

  it('a pending spill asked while unknown, answered in U after the policy arrived, reports SPILL_INCOMPLETE for the whole range in the request unit', () => {
    const b = new SessionBuilder(SID).request('r', 'TOKENS', 0, 5, 5);
    b.open(policyIn('TURNS', 2)).turns(10, 1).spilled(`${SID}:r:0`, 'TURNS', 0, 10);
    const p = play(b.events);
    expect(p.last.outputs.map((o) => o.record === 'audit' && o.value.code)).toEqual([
      'SPILL_INCOMPLETE',
    ]);
    expect(p.state.unspillable).toEqual({ TOKENS: [0, 5] });
  });
});
