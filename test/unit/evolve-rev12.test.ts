/**
 * Contract rev 12, the engine findings it closes, each on a minimal stream: only an event that
 * advances the session (its own next seq, or an authorized out-of-band event) moves its clocks
 * (§4); an unknown session's spills are clipped to its extent E (§4); with a trusted key ring,
 * records made without a key neither drop a state nor create one (§4b, §8).
 * Floor span 0 in TURNS unless said otherwise, turns of one token and one message.
 */
import { type ContextEvent, type SignableEvent, Fleet, engineOptions } from '../../src/engine';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditCodes, pairs, play, policyIn, verdictOf } from '../support/engineHarness';
import { ringOf, signedBy, testKey } from '../support/keys';

const TOP = 4_503_599_627_370_495;
const DAY = 24 * 60 * 60 * 1000;

const spiller = testKey('spill-service', ['SPILL']);
const operator = testKey('oncall', ['ACKNOWLEDGE']);
const withRing = { trustedKeys: ringOf(spiller, operator) };

const signed = (key: typeof spiller, expiresAt?: number) => (e: ContextEvent) =>
  signedBy(e as SignableEvent, key, expiresAt);

describe('finding 1: an unsigned out-of-band record stamped 2^52 − 1', () => {
  /**
   * Ten turns, [0,3) truncated unsummarized, a signed out-of-band acknowledgement of [0,10)
   * (valid for a day), a compaction approved on it and committed (the acknowledgement used up),
   * then a new loss, [8,9).
   */
  function acknowledgedThenLost(): { b: SessionBuilder; ack: ContextEvent } {
    const b = new SessionBuilder('junk-top').open(policyIn('TURNS', 0));
    b.turns(10, 1);
    b.truncate('TURNS', 0, 3);
    b.outOfBand().acknowledge('TURNS', 0, 10);
    b.mapLast(signed(operator, b.last.occurredAt + DAY));
    const ack = b.last;
    b.request('r1', 'TURNS', 3, 8, 8);
    b.commit('r1', 'TURNS', 3, 8, 8);
    b.truncate('TURNS', 8, 9);
    return { b, ack };
  }

  it('drops no state and keeps the out-of-band window: a copy of the signed acknowledgement is a redelivery, and the new loss stays refused EVICTED_UNCOVERED', () => {
    const { b, ack } = acknowledgedThenLost();
    expect(verdictOf(play(b.events.slice(0, -2), withRing).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSS_ACKNOWLEDGED',
    });
    const before = play(b.events, withRing).state;
    b.next({ occurredAt: TOP }).outOfBand().acknowledge('TURNS', 0, TOP); // unsigned
    const junk = play(b.events, withRing);
    expect(junk.last.notes).not.toContain('state-dropped');
    expect(auditCodes(junk.last.outputs)).toEqual(['UNAUTHORIZED_EVENT']);
    expect(junk.state.unit).toBe('TURNS');
    expect(junk.state.lastEventAt).toBe(before.lastEventAt);

    b.events.push(ack); // the byte copy, still within its validity
    const copy = play(b.events, withRing);
    expect(copy.last.notes).toContain('duplicate');
    expect(copy.last.outputs).toEqual([]);

    b.request('r2', 'TURNS', 3, 10, 10);
    const v = verdictOf(play(b.events, withRing).last);
    expect(v.decision).toBe('REFUSE');
    expect(v.reasons.map((r) => r.code)).toEqual(['EVICTED_UNCOVERED']);
    expect(v.reasons[0]!.holes).toEqual([{ unit: 'TURNS', start: 8, end: 9 }]);
  });

  it('alone does not blind a session: the next turn and request find it known, and a compaction that loses nothing is approved', () => {
    const b = new SessionBuilder('junk-blind').open(policyIn('TURNS', 2));
    b.turns(6, 1);
    b.next({ occurredAt: TOP }).outOfBand().spilled('none', 'TURNS', 0, TOP); // unsigned
    b.turn(1);
    b.request('r', 'TURNS', 0, 7, 5);
    const played = play(b.events, withRing);
    expect(played.steps.flatMap((s) => s.notes)).not.toContain('state-dropped');
    expect(played.state.unit).toBe('TURNS');
    expect(verdictOf(played.last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'INVARIANT_HOLDS',
      reasons: [],
    });
  });

  it('for a session id never seen creates no state', () => {
    const fleet = new Fleet(engineOptions(withRing));
    const b = new SessionBuilder('never-seen');
    b.next({ occurredAt: TOP }).outOfBand().acknowledge('TURNS', 0, TOP);
    b.next({ occurredAt: 0 }).outOfBand().spilled('none', 'TURNS', 0, TOP);
    for (const e of b.events) {
      const r = fleet.process(e, 1);
      expect(auditCodes(r.outputs)).toEqual(['UNAUTHORIZED_EVENT']);
      expect(r.state as unknown).toBeUndefined();
    }
    expect(fleet.get('never-seen')).toBeUndefined();
  });
});

describe('finding 2: an unknown session’s SpillCompleted over [0, 2^52 − 1)', () => {
  it('is clipped to its extent E, so a constraint appended and truncated after it is not approved LOSSLESS_SPILL', () => {
    const b = new SessionBuilder('unknown-spill'); // no SessionOpened: an unknown session
    b.turns(3, 1); // E = 3 turns
    b.outOfBand().spilled('unasked', 'TURNS', 0, TOP);
    b.mapLast(signed(spiller));
    const spilled = play(b.events, withRing).state;
    expect(pairs(spilled.spilled.TURNS)).toEqual([[0, 3]]);

    b.turn(1, 'USER', ['CONSTRAINT']); // turn 3, after the spill
    b.truncate('TURNS', 3, 4);
    b.request('r', 'TURNS', 0, 4, 4);
    const v = verdictOf(play(b.events, withRing).last);
    expect(v.decision).toBe('REFUSE');
    expect(v.reasons.map((r) => r.code)).toEqual(['UNKNOWN_SESSION']);
    expect(v.basis).toBeNull();
  });
});

describe('finding 6: an in-band record at a gap seq stamped 2^52 − 1', () => {
  it('does not raise lastEventAt, so the session’s signed answer to its spill request is still authorized and heals the refusal', () => {
    const b = new SessionBuilder('gap-top').open(policyIn('TURNS', 2));
    b.turn(1, 'USER', ['CONSTRAINT']).turns(9, 1);
    b.truncate('TURNS', 0, 3);
    b.request('r', 'TURNS', 3, 10, 10);
    const refused = play(b.events, withRing);
    expect(verdictOf(refused.last)).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    const spillRequestId = verdictOf(refused.last).spillRequestId!;

    b.skipSeq(1).next({ occurredAt: TOP }).turn(1); // a gap: turn 10 at seq + 2
    const leapt = play(b.events, withRing).state;
    expect(leapt.lastEventAt).toBe(refused.state.lastEventAt);

    // The spill service answers an hour-valid signature, covering what is known now, [0,11).
    b.outOfBand().spilled(spillRequestId, 'TURNS', 0, 11);
    b.mapLast(signed(spiller));
    const answered = play(b.events, withRing);
    expect(auditCodes(answered.last.outputs)).not.toContain('UNAUTHORIZED_EVENT');
    expect(pairs(answered.state.spilled.TURNS)).toEqual([[0, 11]]);

    b.request('r2', 'TURNS', 3, 11, 11);
    expect(verdictOf(play(b.events, withRing).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
  });
});
