/**
 * Contract §4 step 0: SpillCompleted, SpillFailed and LossAcknowledged may come out of
 * band, with seq null. They take no place in the sequence, their redeliveries are recognised by
 * eventId among the last 8 accepted, an out-of-band acknowledgement that writes a gap off does
 * not re-base the sequence, and their outputs carry inputSeq null.
 * Floor TURNS span 2, turns of one token/message unless said otherwise.
 */
import type { ContextEvent, Policy } from '../../src/engine';
import { deserializeState, serializeState } from '../../src/engine';
import { rememberedIds, withCanonicalRing } from '../../src/engine/sequence';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditCodes, auditsOf, play, policyIn, verdictOf } from '../support/engineHarness';

const SID = 'sess';

function session(overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(turns, 1);
}

/** The seed's incident with spills disabled: the request is refused with HALT. */
function haltedSession(): SessionBuilder {
  const b = new SessionBuilder(SID).open(policyIn('TURNS', 2, { spill: 'DISABLED' }));
  b.turns(1, 1, ['CONSTRAINT']).turns(9, 1);
  b.truncate('TURNS', 0, 3);
  b.request('r', 'TURNS', 3, 8, 8);
  return b;
}

describe('step 0: out-of-band events take no place in the sequence', () => {
  it('an out-of-band event leaves last seq and the remembered seq eventIds as they were', () => {
    const b = session();
    const before = play(b.events).state;
    b.outOfBand().spilled('unsolicited', 'TURNS', 0, 4);
    const after = play(b.events);
    expect(after.last.notes).toEqual([]);
    expect(after.state.lastSeq).toBe(before.lastSeq);
    expect(rememberedIds(after.state)).toEqual(rememberedIds(before));
    expect(after.state.gapHead).toBeNull();
  });

  it("the orchestrator's next seq after out-of-band events is in order: no gap, no conflict", () => {
    const b = session();
    b.outOfBand().spilled('a', 'TURNS', 0, 4);
    b.outOfBand().acknowledge('TURNS', 0, 2);
    b.outOfBand().spillFailed('nothing-pending');
    b.turns(1, 1);
    const p = play(b.events);
    expect(p.last.notes).toEqual([]);
    expect(auditCodes(p.outputs)).not.toContain('SEQ_CONFLICT');
    expect(p.state.gapHead).toBeNull();
    expect(p.state.lastSeq).toBe(b.nextSeq - 1);
  });

  it('an out-of-band event first in an unknown session: the first in-band event at seq 0 reveals no gap', () => {
    const b = new SessionBuilder(SID);
    b.outOfBand().acknowledge('TURNS', 0, 4);
    b.open(policyIn('TURNS', 2)).turns(3, 1);
    const p = play(b.events);
    expect(p.steps.flatMap((s) => s.notes)).not.toContain('gap');
    expect(p.state.lastSeq).toBe(3);
  });

  it('its outputs carry inputSeq null (LOSS_ACKNOWLEDGED, UNPLACEABLE_RANGE, SPILL_INCOMPLETE)', () => {
    const b = haltedSession();
    b.outOfBand().acknowledge('TURNS', 0, 3);
    b.outOfBand().acknowledge('TOKENS', 0, 3);
    const p = play(b.events);
    const audits = auditsOf(p.steps.slice(-2).flatMap((s) => s.outputs));
    expect(audits.map((a) => [a.code, a.inputSeq])).toEqual([
      ['LOSS_ACKNOWLEDGED', null],
      ['UNPLACEABLE_RANGE', null],
    ]);
    const spilled = session().request('q', 'TURNS', 0, 10, 10);
    const pending = `${SID}:q:${spilled.nextSeq - 1}`;
    spilled.outOfBand().spilled(pending, 'TURNS', 0, 4);
    const incomplete = play(spilled.events);
    expect(auditsOf(incomplete.last.outputs).map((a) => [a.code, a.inputSeq])).toEqual([
      ['SPILL_INCOMPLETE', null],
    ]);
  });
});

describe('step 0: redeliveries by eventId, the last 8 kept', () => {
  it('a redelivered out-of-band event is ignored entirely: no output, the same state, counted', () => {
    const b = haltedSession();
    b.outOfBand().acknowledge('TURNS', 0, 3);
    const ack = b.last;
    const p = play([...b.events, ack]);
    expect(p.last.outputs).toEqual([]);
    expect(p.last.notes).toEqual(['duplicate']);
    expect(p.state).toBe(p.steps[p.steps.length - 2]!.state);
  });

  it('the 8 most recent out-of-band eventIds are remembered: the 8th back is a redelivery, the 9th is accepted afresh', () => {
    const b = session();
    for (let i = 0; i < 9; i++) b.outOfBand().acknowledge('TURNS', 0, 1);
    const oob = b.events.filter((e) => e.seq === null);
    const eighthBack = play([...b.events, oob[1]!]);
    expect(eighthBack.last.notes).toEqual(['duplicate']);
    const ninthBack = play([...b.events, oob[0]!]);
    expect(auditCodes(ninthBack.last.outputs)).toEqual(['LOSS_ACKNOWLEDGED']);
  });

  it('a redelivery does not refresh its place in the window (first in, first out)', () => {
    const b = session();
    b.outOfBand().acknowledge('TURNS', 0, 1);
    const first = b.last;
    const events: ContextEvent[] = [...b.events, first]; // redelivered: must not move to the back
    for (let i = 0; i < 8; i++) {
      b.outOfBand().acknowledge('TURNS', 0, 1);
      events.push(b.last);
    }
    const p = play([...events, first]);
    expect(auditCodes(p.last.outputs)).toEqual(['LOSS_ACKNOWLEDGED']);
  });

  it('out-of-band and in-band eventIds are separate: an in-band event with an out-of-band id is judged by its seq', () => {
    const b = session();
    b.next({ outOfBand: true, eventId: 'shared-id' }).acknowledge('TURNS', 0, 1);
    b.next({ eventId: 'shared-id' }).turns(1, 1);
    const p = play(b.events);
    expect(p.last.notes).toEqual([]);
    expect(p.state.lastSeq).toBe(b.nextSeq - 1);
  });
});

describe('LossAcknowledged (2) out of band: the gap is written off, the sequence is not re-based', () => {
  /** Events were lost (seqs skipped): Hg is set and every request refuses with EVENT_GAP. */
  function gapped(): SessionBuilder {
    const b = session();
    b.skipSeq(2).turns(2, 1);
    return b;
  }

  it('writes Hg off and keeps last seq: the orchestrator carries on with its own next seq, no conflict', () => {
    const b = gapped();
    const lastSeq = b.nextSeq - 1;
    b.outOfBand().acknowledge('TURNS', 0, 12);
    const acked = play(b.events);
    expect(acked.state.gapHead).toBeNull();
    expect(acked.state.lastSeq).toBe(lastSeq);
    b.request('r', 'TURNS', 0, 10, 10);
    const p = play(b.events);
    expect(auditCodes(p.outputs)).not.toContain('SEQ_CONFLICT');
    expect(verdictOf(p.last).rulesChecked).toContain('EVENT_GAP');
    expect(verdictOf(p.last).reasons.map((r) => r.code)).not.toContain('EVENT_GAP');
  });

  it('an in-band acknowledgement at the next seq still re-bases: the orchestrator then collides (why out of band exists)', () => {
    const b = gapped();
    const ackSeq = b.nextSeq;
    b.acknowledge('TURNS', 0, 12); // an operator taking lastSeq+1, as the old runbook said
    // The orchestrator's own next event, at the seq it owns.
    const collided = play([
      ...b.events,
      {
        type: 'TurnAppended',
        sessionId: SID,
        seq: ackSeq,
        eventId: 'orchestrator-own',
        occurredAt: b.last.occurredAt,
        turn: 12,
        tokens: { start: 12, end: 13 },
        messages: { start: 12, end: 13 },
        role: 'ASSISTANT',
        pins: [],
      },
    ]);
    expect(auditCodes(collided.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(collided.state.gapHead).not.toBeNull();
  });

  it('a HALTed session: an out-of-band acknowledgement, then the retry with the next seq is APPROVE (LOSS_ACKNOWLEDGED)', () => {
    const b = haltedSession();
    expect(verdictOf(play(b.events).last)).toMatchObject({ decision: 'REFUSE', action: 'HALT' });
    b.outOfBand().acknowledge(
      'TURNS',
      0,
      10,
      'oncall@example.com',
      'constraint restated by the user',
    );
    b.request('r', 'TURNS', 3, 8, 8);
    const p = play(b.events);
    expect(verdictOf(p.last)).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    expect(auditCodes(p.outputs)).not.toContain('SEQ_CONFLICT');
    b.commit('r', 'TURNS', 3, 8, 8);
    const committed = play(b.events);
    expect(auditCodes(committed.last.outputs)).toEqual([]);
  });
});

describe('step 0 and the repeated-requestId rule', () => {
  it('an accepted out-of-band event makes a repeated request be decided afresh', () => {
    const b = session().request('r', 'TURNS', 0, 10, 10);
    const spillId = `${SID}:r:${b.nextSeq - 1}`;
    expect(verdictOf(play(b.events).last).action).toBe('SPILL');
    b.outOfBand().spilled(spillId, 'TURNS', 0, 10);
    b.request('r', 'TURNS', 0, 10, 10);
    const p = play(b.events);
    expect(p.last.notes).not.toContain('stored-verdict');
    expect(verdictOf(p.last)).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });

  it('a redelivered out-of-band event does not: the stored verdict is emitted again', () => {
    const b = session();
    b.outOfBand().spilled('unsolicited', 'TURNS', 0, 2);
    const spill = b.last;
    b.request('r', 'TURNS', 0, 10, 10);
    const request = b.last;
    const p = play([...b.events, spill, { ...request, seq: b.nextSeq, eventId: 'again' }]);
    expect(p.last.notes).toContain('stored-verdict');
  });

  it('an accepted out-of-band event counts even when step 3 ignores it (a SpillFailed for no pending request)', () => {
    const b = session().request('r', 'TURNS', 0, 10, 10);
    b.outOfBand().spillFailed('not-pending');
    b.request('r', 'TURNS', 0, 10, 10);
    const p = play(b.events);
    expect(p.steps[p.steps.length - 2]!.notes).toEqual(['ignored']);
    expect(p.last.notes).not.toContain('stored-verdict');
  });
});

describe('the SessionClosed grace check comes before step 0', () => {
  it('an out-of-band event past the grace period finds an unknown session', () => {
    const b = session().close();
    b.advanceTime(2 * 60 * 60 * 1000);
    b.outOfBand().acknowledge('TURNS', 0, 4);
    const p = play(b.events);
    expect(p.last.notes).toContain('state-dropped');
    expect(p.state.policy).toBeNull();
    expect(p.state.lastSeq).toBe(-1);
  });
});

describe('serialized state keeps the out-of-band eventIds', () => {
  it('round-trips the 8 remembered out-of-band eventIds', () => {
    const b = session();
    for (let i = 0; i < 10; i++) b.outOfBand().acknowledge('TURNS', 0, 1);
    const s = play(b.events).state;
    expect(s.outOfBandIds).toHaveLength(8);
    expect(deserializeState(serializeState(s))).toEqual(withCanonicalRing(s));
  });

  it('a changelog record of state format 1 (no out-of-band window) still restores, with no out-of-band eventIds', () => {
    // serializeState of the previous release for a TURNS session: 6 turns, [0,2) truncated, a
    // request r1, a spill of [0,6).
    const v1 = Buffer.from(
      '0102d00fc00c880e00040000001200060c780c00020a0a64780a0c000000040004000000020004000c0000000000020e76313a72313a3800000c14000202020202020202020014e095c198ce88a607c6ffb19194a0821dd4a49fc7ffb1ce05c4effdc480dec41fee96db86bfb6ab0adabb849fcbc3e413b088b4db8ba5871a8086e7d4f0fa8105c6e2c0e8b4cedc0ceae190a9d3edbc050002f4bb94d6b8e6cc0a000408080010809dd6edee66809dd6edee6610001200',
      'hex',
    );
    const s = deserializeState(v1);
    expect(s).toMatchObject({
      lastSeq: 9,
      truncated: [0, 2],
      spilled: { TURNS: [0, 6] },
      epoch: 9,
      outOfBandIds: [],
    });
    expect(s.verdicts).toHaveLength(1);
    expect(deserializeState(serializeState(s))).toEqual(s);
  });
});
