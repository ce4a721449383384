/**
 * Contract readings pinned on minimal streams, each run through the engine and the reference
 * model side by side (test/support/differential.ts) and checked against the value the reading
 * gives: where the contract's words leave a choice, these name the choice; where the engine and
 * the model part, the example that shows it stays here.
 */
import { engineOptions, evolve, type EngineInput, type SessionState } from '../../src/engine';
import { differential } from '../support/differential';
import { pairs, play, policyIn, verdictsOf } from '../support/engineHarness';
import { type SignableEvent, authorize } from '../support/signedEvents';
import { testRing } from '../support/testRing';
import { SessionBuilder } from '../support/sessionBuilder';

const SMALL = { graceMs: 20_000, idleMs: 50_000 };

function engineRun(events: readonly EngineInput[], small = false) {
  let s: SessionState | undefined;
  const outputs = events.map((e, i) => {
    const r = evolve(s, e, 7_000_000 + i, engineOptions(small ? SMALL : {}));
    s = r.state;
    return r.outputs;
  });
  return { outputs, state: s! };
}

describe('contract readings the engine and the model share', () => {
  it('a SessionOpened in conflict before any policy contests the policy that arrives later (§4)', () => {
    const b = new SessionBuilder('contest-early');
    b.turn(1).turn(1);
    b.next({ seq: 0, eventId: 'late-open' }).open(policyIn('TURNS', 0));
    b.open(policyIn('TURNS', 0)).request('r', 'TURNS', 0, 0, 1);
    differential(b.events);
    const { outputs, state } = engineRun(b.events);
    expect(state.contested).toBe(true);
    const verdict = outputs.at(-1)!.find((o) => o.record === 'verdict')!;
    expect(verdict.record === 'verdict' && verdict.value.reasons.map((r) => r.code)).toContain(
      'UNKNOWN_SESSION',
    );
  });

  it('an event in conflict stamped later than the last one leaves lastEventAt as it was (§4 rev 12: it does not advance the session)', () => {
    const b = new SessionBuilder('conflict-time').open(policyIn('TURNS', 0));
    const opened = b.last.occurredAt;
    b.next({ seq: 0, eventId: 'again', occurredAt: opened + 5000 }).open(policyIn('TURNS', 0));
    differential(b.events, SMALL);
    expect(engineRun(b.events, true).state.lastEventAt).toBe(opened);
  });

  it('a dropped known state without turns hands on F = 0, which later turns raise (§4)', () => {
    const b = new SessionBuilder('f-zero').open(policyIn('TURNS', 0));
    b.advanceTime(100_000).turn(3).request('r', 'TOKENS', 0, 0, 0);
    differential(b.events, SMALL);
    const { outputs, state } = engineRun(b.events, true);
    expect(state.evidenceHead).toEqual({ TURNS: 1, TOKENS: 3, MESSAGES: 1 });
    const verdict = outputs.at(-1)!.find((o) => o.record === 'verdict')!;
    // t = 0, but F = 3 in TOKENS: everything below F must be recoverable first.
    expect(verdict.record === 'verdict' && verdict.value.decision).toBe('REFUSE');
  });
  it('a repeated request answered from the store raises an unknown session’s extent E when it advances the session (§4, decision 168)', () => {
    const ring = testRing([['ACKNOWLEDGE']]);
    const b = new SessionBuilder('extent-repeat');
    // At a gap seq (a first event with seq 1): decided, but it does not advance the session.
    b.next({ seq: 1 }).request('r0', 'TURNS', 0, 1, 1);
    b.request('r0', 'TURNS', 0, 1, 1); // seq 2, the next: advances; answered from the store
    b.outOfBand().acknowledge('TURNS', 0, 4_503_599_627_370_495);
    b.mapLast((e) => authorize(e as SignableEvent, 'signed', ring, 0, 0));
    differential(b.events, { ring });
    const { state, outputs } = play(b.events, { trustedKeys: ring.engine });
    // The repeat was answered from the store (the first asking's inputSeq), not decided afresh.
    expect(verdictsOf(outputs).map((v) => v.inputSeq)).toEqual([1, 1]);
    expect(pairs(state.ackOnce.TURNS)).toEqual([[0, 1]]);
  });
});

describe('where the engine and the model part', () => {
  // A request approved while the session was unknown (TOKENS, t = 0), a policy in TURNS, a
  // first turn that skips turn 0 (a gap: Hg = 2), then the commit of that request: deciding it
  // again finds EVENT_GAP's hole [0,2) in TURNS, where every known-session check is made
  // (§2 "all checks compare ranges in U"); the engine labels the audit's range TOKENS, the
  // commit's unit.
  it('APPROVAL_STALE_AT_COMMIT names its holes in the floor unit U, where they were found', () => {
    const b = new SessionBuilder('stale-unit');
    b.request('r0', 'TOKENS', 0, 0, 0);
    b.open(policyIn('TURNS', 0, { truncatorUnit: 'TOKENS' }));
    b.turnAt(1, [1, 2], [1, 2]);
    b.commit('r0', 'TOKENS', 0, 0, 0);
    const stale = engineRun(b.events)
      .outputs.at(-1)!
      .find((o) => o.record === 'audit' && o.value.code === 'APPROVAL_STALE_AT_COMMIT')!;
    expect(stale.record === 'audit' && stale.value.ranges).toEqual([
      { unit: 'TURNS', start: 0, end: 2 },
    ]);
    differential(b.events);
  });
});
