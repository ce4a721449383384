import { Fleet } from '../../src/engine';
import { deserializeState, serializeState } from '../../src/engine/serialize';
import type { SessionState } from '../../src/engine/state';
import { SessionStates } from '../../src/kafka/sessionStates';
import { haltThenAcknowledgeExample } from '../support/examples';

/** A real session's state (the example's), open or closed at `closedAt`. */
function state(closedAt: number | null): SessionState {
  const fleet = new Fleet();
  const events = haltThenAcknowledgeExample();
  for (const e of events) fleet.process(e, e.occurredAt);
  const s = fleet.get(events[0]!.sessionId)!;
  return { ...deserializeState(serializeState(s)), closedAt };
}

describe('SessionStates (restored sessions kept as bytes)', () => {
  it('keeps a copy of the bytes and decodes them on first use', () => {
    const states = new SessionStates();
    const open = state(null);
    const fetched = Buffer.concat([Buffer.from('xx'), serializeState(open)]).subarray(2);
    states.setSerialized('a', fetched);
    fetched.fill(0); // the fetch buffer is reused: the store must not share it
    expect(states.size).toBe(1);
    expect(states.serializedCount).toBe(1);
    expect(states.peek('a')).toEqual(open);
    const owned = states.owned('a')!;
    expect(owned).toEqual(open);
    expect(states.owned('a')).not.toBe(owned); // each caller gets its own object
    expect(states.serializedCount).toBe(1); // still bytes until a new state is committed
    states.set('a', owned);
    expect(states.serializedCount).toBe(0);
    expect(states.peek('a')).toBe(owned);
    expect(states.owned('a')).not.toBe(owned); // a copy of a decoded state
    expect(states.owned('a')).toEqual(owned);
    expect(states.owned('missing')).toBeUndefined();
    expect(states.peek('missing')).toBeUndefined();
  });

  it('counts bytes entries across replace, delete and clear', () => {
    const states = new SessionStates();
    const bytes = serializeState(state(null));
    states.setSerialized('a', bytes);
    states.setSerialized('a', bytes);
    states.setSerialized('b', bytes);
    expect(states.serializedCount).toBe(2);
    states.delete('a');
    expect(states.serializedCount).toBe(1);
    expect(states.has('a')).toBe(false);
    expect([...states.sessionIds()]).toEqual(['b']);
    states.clear();
    expect(states.size).toBe(0);
    expect(states.serializedCount).toBe(0);
    expect(states.classify(10)).toBe(0);
  });

  it('classify decodes a bounded number per call and keeps only closed sessions decoded', () => {
    const states = new SessionStates();
    const open = serializeState(state(null));
    const closed = serializeState(state(1_000));
    for (let i = 0; i < 5; i++) states.setSerialized(`s${i}`, i % 2 === 0 ? closed : open);
    states.set('touched', state(null));
    expect([...states.decoded()].map(([id]) => id)).toEqual(['touched']);
    expect(states.classify(2)).toBe(2); // s0 (closed), s1 (open)
    expect([...states.decoded()].map(([id]) => id)).toEqual(['s0', 'touched']);
    expect(states.classify(10)).toBe(3); // s2..s4; 'touched' is skipped; the round ends
    expect([...states.decoded()].map(([id, s]) => [id, s.closedAt])).toEqual([
      ['s0', 1_000],
      ['s2', 1_000],
      ['s4', 1_000],
      ['touched', null],
    ]);
    expect(states.serializedCount).toBe(2);
    // The next call starts a new round over the bytes left, and sees those added since.
    states.setSerialized('later', closed);
    expect(states.classify(10)).toBe(3); // s1, s3, later
    expect(states.peek('later')!.closedAt).toBe(1_000);
    expect(states.serializedCount).toBe(2);
  });

  it('classify keeps decoded an open session that `expired` lets go, and skips bytes that do not decode', () => {
    const states = new SessionStates();
    const idle = { ...state(null), lastEventAt: 5 };
    const recent = { ...state(null), lastEventAt: 50 };
    states.setSerialized('idle', serializeState(idle));
    states.setSerialized('corrupt', Buffer.from([0xff, 1, 2, 3]));
    states.setSerialized('recent', serializeState(recent));
    expect(states.classify(10, (s) => s.lastEventAt! < 10)).toBe(3);
    expect([...states.decoded()].map(([id]) => id)).toEqual(['idle']);
    // A later round finds the one that has become idle since.
    expect(states.classify(10, (s) => s.lastEventAt! < 100)).toBe(2);
    expect([...states.decoded()].map(([id]) => id)).toEqual(['idle', 'recent']);
    expect(states.serializedCount).toBe(1);
  });
});
