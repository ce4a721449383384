/**
 * contract §4 steps 1 and 2 (seq: redelivery, conflict, gap; the gap head Hg), the 32 remembered
 * eventIds, the SessionClosed grace period, and the §6 output order.
 * Floor TURNS span 2, turns of one token/message.
 */
import type { ContextEvent, Policy } from '../../src/engine';
import { heads } from '../../src/engine/state';
import { rememberedIds } from '../../src/engine/sequence';
import { SessionBuilder } from '../support/sessionBuilder';
import {
  ALL_RULES,
  auditCodes,
  auditsOf,
  play,
  policyIn,
  reasonsOf,
  verdictOf,
} from '../support/engineHarness';

const SID = 'sess';

function session(overrides: Partial<Policy> = {}, turns = 10): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(turns, 1);
}

function at(b: SessionBuilder, seq: number): ContextEvent {
  const e = b.events.find((x) => x.seq === seq);
  if (!e) throw new Error(`no event with seq ${seq}`);
  return e;
}

describe('step 1: redelivery', () => {
  it('an event redelivered with the same seq and eventId is ignored entirely: no output, same state', () => {
    const b = session();
    const p = play([...b.events, at(b, 3)]);
    expect(p.last.outputs).toEqual([]);
    expect(p.last.notes).toEqual(['duplicate']);
    expect(p.state).toBe(p.steps[p.steps.length - 2]!.state);
  });

  it('a redelivered request is not answered again (it was answered when it first arrived)', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    const req = b.last;
    b.turns(1, 1);
    const p = play([...b.events, req]);
    expect(p.last.outputs).toEqual([]);
  });

  it('the 32 highest accepted seqs are remembered: seq last−31 is a redelivery, last−32 a conflict', () => {
    const b = session({}, 39); // seqs 0..39
    const kept = play([...b.events, at(b, 8)]);
    expect(kept.last.notes).toEqual(['duplicate']);
    const forgotten = play([...b.events, at(b, 7)]);
    expect(auditCodes(forgotten.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(forgotten.state.gapHead).toBe(39);
  });
});

describe('step 1: conflict', () => {
  it('same seq, another eventId: VIOLATION SEQ_CONFLICT, a gap (Hg = H), the event not applied', () => {
    const b = session();
    b.next({ seq: 4, eventId: 'imposter' }).truncate('TURNS', 0, 2);
    const before = play(b.events.slice(0, -1)).state;
    const p = play(b.events);
    const [a] = auditsOf(p.last.outputs);
    expect(a).toMatchObject({
      kind: 'VIOLATION',
      code: 'SEQ_CONFLICT',
      sessionId: SID,
      inputSeq: 4,
      requestId: null,
    });
    expect(p.last.outputs).toHaveLength(1);
    expect(p.state.gapHead).toBe(10);
    expect(p.state.truncated).toEqual(before.truncated);
    expect(p.state.lastSeq).toBe(before.lastSeq);
  });

  it('a seq never seen below the last seq is a conflict too', () => {
    const b = new SessionBuilder(SID).open(policyIn('TURNS', 2)).skipSeq().turns(5, 1);
    b.next({ seq: 1 }).turnAt(5, [5, 6], [5, 6]);
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(heads(p.state).TURNS).toBe(5); // the turn was not applied
  });

  it('the gap of a conflict reaches the positions the event names in U (a turn’s end)', () => {
    const b = session();
    b.next({ seq: 2, eventId: 'late' }).turnAt(12, [12, 13], [12, 13]);
    expect(play(b.events).state.gapHead).toBe(13);
  });

  it('a conflicting CompactionCommitted is not applied: no audit but SEQ_CONFLICT, V unchanged', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.next({ seq: 3, eventId: 'x' }).commit('r', 'TURNS', 0, 6, 6);
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(p.state.verbatimStart).toBe(0);
  });

  it('a conflicting CompactionRequested is still decided, after the SEQ_CONFLICT, with the gap', () => {
    const b = session();
    b.next({ seq: 5, eventId: 'x' }).request('r', 'TURNS', 0, 6, 6);
    const p = play(b.events);
    expect(p.last.outputs.map((o) => o.record)).toEqual(['audit', 'verdict', 'spill-request']);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
    const v = verdictOf(p.last);
    expect(reasonsOf(v)).toEqual([{ code: 'EVENT_GAP', holes: [[0, 10]] }]);
    expect(v.inputSeq).toBe(5);
  });

  it('a conflicting SpillCompleted is still applied (P grows, the pending request resolves)', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const id = `${SID}:r:${b.last.seq}`;
    b.next({ seq: 2, eventId: 'x' }).spilled(id, 'TURNS', 0, 4);
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT', 'SPILL_INCOMPLETE']);
    expect(p.state.spilled.TURNS).toEqual([0, 4]);
    expect(p.state.pendingSpill).toBeNull();
  });

  it('a conflicting LossAcknowledged is still applied (advisory, A1)', () => {
    const b = session();
    b.next({ seq: 2, eventId: 'x' }).acknowledge('TURNS', 4, 5);
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT', 'LOSS_ACKNOWLEDGED']);
    expect(p.state.ackOnce.TURNS).toEqual([4, 5]);
  });

  it('a conflicting SessionOpened on an unknown session is not applied', () => {
    const b = new SessionBuilder('ghost').turns(2, 1);
    b.next({ seq: 0, eventId: 'x' }).open(policyIn('TURNS', 2));
    const p = play(b.events);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(p.state.policy).toBeNull();
  });
});

describe('step 1 and 2: gap', () => {
  it('a seq jump is a gap: Hg = max(H, the turn’s end in U)', () => {
    const p = play(session().skipSeq().turns(1, 1).events);
    expect(p.state.gapHead).toBe(11);
    expect(p.state.lastSeq).toBe(12);
  });

  it('Hg takes a request’s max(summaryInput.end, tailStart) in U', () => {
    const p = play(session().skipSeq(3).request('r', 'TURNS', 0, 13, 15).events);
    expect(p.state.gapHead).toBe(15);
    expect(reasonsOf(verdictOf(p.last))[0]).toEqual({ code: 'EVENT_GAP', holes: [[0, 15]] });
  });

  it('Hg takes a commit’s max(summaryInput.end, tailStart) in U', () => {
    const p = play(session().skipSeq().commit('c', 'TURNS', 0, 14, 12).events);
    expect(p.state.gapHead).toBe(14);
  });

  it('Hg takes a range’s end, and never less than H', () => {
    expect(play(session().skipSeq().truncate('TURNS', 0, 3).events).state.gapHead).toBe(10);
    expect(play(session().skipSeq().spilled('x', 'TURNS', 0, 17).events).state.gapHead).toBe(17);
  });

  it('positions in another unit add nothing: Hg = H', () => {
    const p = play(session().skipSeq().request('r', 'TOKENS', 0, 40, 40).events);
    expect(p.state.gapHead).toBe(10);
  });

  it('Hg only grows', () => {
    const b = session().skipSeq().request('r', 'TURNS', 0, 15, 15);
    b.skipSeq().truncate('TURNS', 0, 2);
    expect(play(b.events).state.gapHead).toBe(15);
  });

  it('the event after a gap continues the sequence: last seq := max(last seq, seq)', () => {
    const b = session().skipSeq(5).turns(1, 1);
    const hg = play(b.events).state.gapHead;
    b.turns(1, 1);
    const p = play(b.events);
    expect(p.last.notes).not.toContain('gap');
    expect(p.state.gapHead).toBe(hg);
  });

  it('a first event with seq > 0 is a gap; without a policy there is no Hg', () => {
    const b = new SessionBuilder('ghost').skipSeq(3).request('r', 'TURNS', 0, 0, 0);
    const p = play(b.events);
    expect(p.last.notes).toContain('gap');
    expect(p.state.gapHead).toBeNull();
    expect(verdictOf(p.last).rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
  });

  it('a dead-lettered event leaves its seq unused, so the next event reveals the gap', () => {
    const b = session();
    b.skipSeq(); // the seq the dead letter carried
    b.request('r', 'TURNS', 0, 6, 6);
    expect(reasonsOf(verdictOf(play(b.events).last))).toEqual([
      { code: 'EVENT_GAP', holes: [[0, 10]] },
    ]);
  });
});

describe('SessionClosed grace period (event time)', () => {
  const GRACE = 60 * 60 * 1000;

  function closed() {
    const b = session().close();
    return { b, closedAt: b.last.occurredAt };
  }

  it('an event within the grace period still finds the session', () => {
    const { b, closedAt } = closed();
    b.next({ occurredAt: closedAt + GRACE }).request('r', 'TURNS', 0, 6, 6);
    const v = verdictOf(play(b.events).last);
    expect(v.rulesChecked).toEqual([...ALL_RULES]);
    expect(v.decision).toBe('APPROVE');
  });

  it('an event more than the grace period after it finds an unknown session (state dropped)', () => {
    const { b, closedAt } = closed();
    b.next({ occurredAt: closedAt + GRACE + 1 }).request('r', 'TURNS', 0, 6, 6);
    const p = play(b.events);
    expect(p.last.notes).toContain('state-dropped');
    expect(p.state.policy).toBeNull();
    const v = verdictOf(p.last);
    expect(v.rulesChecked).toEqual(['UNKNOWN_SESSION', 'INVALID_REQUEST']);
    expect(reasonsOf(v)).toEqual([{ code: 'UNKNOWN_SESSION', holes: [] }]);
  });

  it('is judged in event time, not by the processing clock, and is configurable', () => {
    const { b, closedAt } = closed();
    b.next({ occurredAt: closedAt + 1_000 }).request('r', 'TURNS', 0, 6, 6);
    const farClock = play(b.events, {}, () => closedAt + 10 * GRACE);
    expect(farClock.state.policy).not.toBeNull();
    const short = play(b.events, { graceMs: 999 });
    expect(short.state.policy).toBeNull();
  });

  it('the dropped state forgets seqs, verdicts and sets', () => {
    const { b, closedAt } = closed();
    b.next({ occurredAt: closedAt + GRACE + 1 }).turns(1, 1);
    const s = play(b.events).state;
    expect(s).toMatchObject({ policy: null, gapHead: null, verdicts: [], closedAt: null });
    expect(rememberedIds(s).seqs).toEqual([b.last.seq]);
  });
});

describe('output order for one input event (contract §6)', () => {
  it('audit records, then the verdict, then the spill request', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.next({ seq: 3, eventId: 'x' }).request('r', 'TURNS', 0, 5, 6);
    const p = play(b.events);
    expect(p.last.outputs.map((o) => o.record)).toEqual([
      'audit',
      'audit',
      'verdict',
      'spill-request',
    ]);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT', 'REQUEST_ID_REUSED']);
  });
});
