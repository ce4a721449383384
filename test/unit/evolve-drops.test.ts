/**
 * Contract §4 (rev 11): idle sessions expire in event time; whatever drops a state (grace or
 * idle) hands its lastEventAt and its evidence head F to the new unknown state; an unknown
 * session's request is healed only when everything below max(t, F) is recoverable, and its spill
 * request reaches F. Also the contested policy, and the blind state of a session refused at
 * capacity. Floor TURNS span 2, turns of one token/message unless said otherwise.
 */
import type { MalformedRequest } from '../../src/engine';
import { MAX_POSITION, blindState, emptyState } from '../../src/engine/state';
import { evolve } from '../../src/engine/evolve';
import { engineOptions } from '../../src/engine/fleet';
import { RULE_CODES } from '../../src/engine/rules';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditsOf, play, policyIn, spillsOf, verdictOf } from '../support/engineHarness';
import { ringOf, signedBy, testKey } from '../support/keys';
import type { LossAcknowledged } from '../../src/engine';

const SID = 'sess';
const IDLE = 60_000;
const short = { idleMs: IDLE, graceMs: 10_000 };

/** 10 turns, one token each, in TOKENS units with a 100-token floor; heads 10/10/10 unless said. */
function openSession(turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2)).turns(turns, 1);
}

describe('idle expiry (event time)', () => {
  it('an event more than the idle period after lastEventAt finds an unknown state holding F and lastEventAt', () => {
    const b = openSession();
    const last = b.last.occurredAt;
    b.advanceTime(IDLE + 1).turns(1, 1);
    const p = play(b.events, short);
    expect(p.last.notes).toContain('state-dropped');
    expect(p.state.policy).toBeNull();
    expect(p.state.evidenceHead).toEqual({ TURNS: 11, TOKENS: 11, MESSAGES: 11 });
    // The turn itself raised F (TURNS 10 → 11); lastEventAt is the new turn's.
    expect(p.state.lastEventAt).toBeGreaterThan(last + IDLE);
  });

  it('exactly the idle period later is not idle (strictly more)', () => {
    const b = openSession();
    const at = b.last.occurredAt + IDLE;
    b.next({ occurredAt: at }).turns(1, 1);
    expect(play(b.events, short).state.policy).not.toBeNull();
  });

  it('F in U is the known head H′ (a gap raised it), in the other units the heads', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).turns(4, 5);
    b.truncate('TURNS', 0, 9); // names turns never seen: Hg = 9
    b.advanceTime(IDLE + 1)
      .outOfBand()
      .spillFailed('nothing');
    expect(play(b.events, short).state.evidenceHead).toEqual({
      TURNS: 9,
      TOKENS: 20,
      MESSAGES: 4,
    });
  });

  it('a request after the drop, even with t = 0, is refused UNKNOWN_SESSION and its spill reaches F', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1).request('r', 'TURNS', 0, 0, 0);
    const p = play(b.events, short);
    const v = verdictOf(p.last);
    expect(v).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    expect(v.rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
    expect(spillsOf(p.last.outputs)[0]!.range).toEqual({ start: 0, end: 10 });
  });

  it('a spill reaching F heals it, with basis LOSSLESS_SPILL even for t = 0', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1)
      .outOfBand()
      .spilled('s', 'TURNS', 0, 10);
    b.request('r', 'TURNS', 0, 0, 0);
    expect(verdictOf(play(b.events, short).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
  });

  it('a spill short of F does not heal it', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1)
      .outOfBand()
      .spilled('s', 'TURNS', 0, 9);
    b.request('r', 'TURNS', 0, 0, 0);
    expect(verdictOf(play(b.events, short).last).decision).toBe('REFUSE');
  });

  it('a session that never saw an event is not dropped, and without F a t = 0 request is approved', () => {
    const b = new SessionBuilder(SID).request('r', 'TURNS', 0, 0, 0);
    expect(verdictOf(play(b.events, short).last).decision).toBe('APPROVE');
  });

  it('an unknown state with F raises it with every turn (each unit) and truncation (its unit)', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1).turnAt(30, [40, 45], [50, 52]);
    b.truncate('TOKENS', 0, 70);
    expect(play(b.events, short).state.evidenceHead).toEqual({
      TURNS: 31,
      TOKENS: 70,
      MESSAGES: 52,
    });
  });

  it('an unknown state without F does not learn from turns (nothing to reach)', () => {
    const b = new SessionBuilder(SID).turns(5, 1);
    expect(play(b.events, short).state.evidenceHead).toBeNull();
  });

  it('a new SessionOpened after the drop discards F; the session starts over', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1).open(policyIn('TURNS', 2));
    const p = play(b.events, short);
    expect(p.state.evidenceHead).toBeNull();
    expect(p.state.policy).not.toBeNull();
  });

  it('a dropped unknown state hands its own F on (a second drop keeps what the first knew)', () => {
    const b = openSession();
    b.advanceTime(IDLE + 1)
      .outOfBand()
      .spillFailed('x');
    b.advanceTime(IDLE + 1)
      .outOfBand()
      .spillFailed('y');
    const p = play(b.events, short);
    expect(p.last.notes).toContain('state-dropped');
    expect(p.state.evidenceHead).toEqual({ TURNS: 10, TOKENS: 10, MESSAGES: 10 });
  });
});

describe('the grace drop hands on lastEventAt and F too', () => {
  it('an event past the grace after SessionClosed finds an unknown state with F', () => {
    const b = openSession().close();
    const closedAt = b.last.occurredAt;
    b.advanceTime(short.graceMs + 1).request('r', 'TURNS', 0, 0, 0);
    const p = play(b.events, short);
    expect(p.state.evidenceHead).toEqual({ TURNS: 10, TOKENS: 10, MESSAGES: 10 });
    expect(p.state.lastEventAt).toBeGreaterThan(closedAt);
    expect(verdictOf(p.last).decision).toBe('REFUSE');
  });
});

describe('a dead-lettered (answered malformed) request', () => {
  it('neither drops the state nor sets lastEventAt', () => {
    const b = openSession();
    const before = play(b.events, short).state.lastEventAt;
    const malformed: MalformedRequest = {
      type: 'MalformedRequest',
      sessionId: SID,
      seq: b.nextSeq,
      requestId: 'bad',
      eventId: 'bad-event',
      occurredAt: (before ?? 0) + IDLE + 5,
      error: 'field "unit": expected one of TURNS, TOKENS, MESSAGES',
    };
    const p = play([...b.events, malformed], short);
    expect(p.last.notes).not.toContain('state-dropped');
    expect(p.state.policy).not.toBeNull();
    expect(p.state.lastEventAt).toBe(before);
  });
});

describe('lastEventAt', () => {
  it('is the greatest occurredAt of accepted events: one stamped earlier does not lower it', () => {
    const b = openSession(3);
    const latest = b.last.occurredAt;
    b.next({ occurredAt: 5 }).turns(1, 1);
    expect(play(b.events, short).state.lastEventAt).toBe(latest);
  });

  it('is not moved by a redelivery: an old event re-sent stamped past the idle period drops nothing (rev 12)', () => {
    const b = openSession(3);
    const before = play(b.events, short).state.lastEventAt;
    const again = { ...b.last, occurredAt: b.last.occurredAt + IDLE + 1 };
    const p = play([...b.events, again], short);
    expect(p.last.notes).toEqual(['duplicate']);
    expect(p.state.lastEventAt).toBe(before);
    expect(p.state.policy).not.toBeNull();
  });
});

describe('the contested policy', () => {
  /** A forged SessionOpened (permissive: PINNED coverage, huge floor span 0) first, then the orchestrator's. */
  function contested(): SessionBuilder {
    const b = new SessionBuilder(SID);
    b.next({ eventId: 'forged' }).open(policyIn('TURNS', 0, { coverage: 'PINNED' }));
    b.next({ seq: 0 }).open(policyIn('TURNS', 2));
    return b;
  }

  it('a SessionOpened in conflict contests the policy, whatever it carries', () => {
    const p = play(contested().events);
    expect(p.state.contested).toBe(true);
    expect(auditsOf(p.last.outputs).map((a) => a.code)).toEqual(['SEQ_CONFLICT']);
    expect(p.state.policy?.coverage).toBe('PINNED'); // the first one holds
  });

  it('its requests are checked by UNKNOWN_SESSION first and by every known-session rule', () => {
    const b = contested().turns(10, 1).request('r', 'TURNS', 0, 8, 8);
    const v = verdictOf(play(b.events).last);
    // Every rule from the top, without EVICTED_UNCOVERED: the forged policy that holds is PINNED.
    expect(v.rulesChecked).toEqual(RULE_CODES.filter((c) => c !== 'EVICTED_UNCOVERED'));
    expect(v).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    // The conflict was a gap at position 0 (the SessionOpened names none): EVENT_GAP's hole is empty.
    expect(v.reasons.map((r) => r.code)).toEqual(['UNKNOWN_SESSION']);
    expect(v.reasons[0]!.message).toContain('contested');
  });

  it('a spill of everything before the tail heals UNKNOWN_SESSION (and the gap) for it', () => {
    const b = contested().turns(10, 1).request('r', 'TURNS', 0, 8, 8);
    b.outOfBand().spilled('s', 'TURNS', 0, 10);
    b.request('r2', 'TURNS', 0, 8, 8);
    expect(verdictOf(play(b.events).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
  });

  it('only a drop clears it', () => {
    const b = contested()
      .turns(3, 1)
      .advanceTime(IDLE + 1)
      .open(policyIn('TURNS', 2));
    expect(play(b.events, short).state.contested).toBe(false);
  });
});

describe('the blind state (a session refused at capacity that later gets state)', () => {
  const operator = testKey('oncall', ['ACKNOWLEDGE']);
  const options = engineOptions({ trustedKeys: ringOf(operator) });

  it('is unknown with F at 2^52 − 1 in every unit: any request is refused, its spill reaches F', () => {
    const r = new SessionBuilder(SID).request('r', 'TURNS', 0, 0, 0).last;
    const step = evolve(blindState(), r, r.occurredAt, options);
    expect(verdictOf(step)).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
    expect(spillsOf(step.outputs)[0]!.range).toEqual({ start: 0, end: MAX_POSITION });
  });

  it('an unsigned acknowledgement of everything does not release it; a signed one does', () => {
    const b = new SessionBuilder(SID);
    b.outOfBand().acknowledge('TURNS', 0, MAX_POSITION);
    const unsigned = b.last as LossAcknowledged;
    b.request('r', 'TURNS', 0, 0, 0);
    const request = b.last;
    let s = evolve(blindState(), unsigned, 0, options).state;
    expect(verdictOf(evolve(s, request, 0, options)).decision).toBe('REFUSE');
    s = evolve(blindState(), signedBy(unsigned, operator), 0, options).state;
    expect(verdictOf(evolve(s, request, 0, options))).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSS_ACKNOWLEDGED',
    });
  });

  it('differs from an empty state only in F', () => {
    expect({ ...blindState(), evidenceHead: null }).toEqual(emptyState());
  });
});
