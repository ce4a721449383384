/** The `/sessions/{id}` view of acknowledgements (A = A0 ∪ A1, contract §4 LossAcknowledged). */
import { sessionView } from '../../src/http/sessionView';
import { play, policyIn } from '../support/engineHarness';
import { SessionBuilder } from '../support/sessionBuilder';

describe('sessionView', () => {
  it('lists one acknowledgement of lost positions once in A, and again in each of A0 and A1', () => {
    const b = new SessionBuilder('s').open(policyIn('TURNS', 2)).turns(10, 1);
    b.truncate('TURNS', 0, 4).acknowledge('TURNS', 0, 4);
    const v = sessionView('s', 0, play(b.events).state, []);
    const turns = (start: number, end: number) => ({ unit: 'TURNS', start, end });
    expect(v.acknowledged).toEqual([turns(0, 4)]);
    expect(v.acknowledgedForGood).toEqual([turns(0, 4)]);
    expect(v.acknowledgedOnce).toEqual([turns(0, 4)]);
    expect(v.evicted).toEqual([]);
  });

  it('keeps only A0 once the next truncation expires A1', () => {
    const b = new SessionBuilder('s').open(policyIn('TURNS', 2)).turns(10, 1);
    b.truncate('TURNS', 0, 4).acknowledge('TURNS', 0, 4).truncate('TURNS', 4, 6);
    const v = sessionView('s', 0, play(b.events).state, []);
    expect(v.acknowledgedOnce).toEqual([]);
    expect(v.acknowledged).toEqual([{ unit: 'TURNS', start: 0, end: 4 }]);
    expect(v.evicted).toEqual([{ unit: 'TURNS', start: 4, end: 6 }]);
  });

  it('shows an unknown session how far its spills and acknowledgements reach (extent, rev 12); none for a known one', () => {
    const ghost = new SessionBuilder('g').turns(3, 100).request('r', 'TURNS', 0, 2, 5);
    expect(sessionView('g', 0, play(ghost.events).state, []).extent).toEqual({
      TURNS: 5,
      TOKENS: 300,
      MESSAGES: 3,
    });
    const known = new SessionBuilder('s').open(policyIn('TURNS', 2)).turns(3, 1);
    expect(sessionView('s', 0, play(known.events).state, []).extent).toBeNull();
  });
});
