import { Fleet } from '../../src/engine';
import { deserializeState, serializeState } from '../../src/engine/serialize';
import type { SessionState } from '../../src/engine/state';
import {
  CLOSED_SINCE_HEADER,
  SEEN_AT_HEADER,
  stampHeaders,
  stampOfHeaders,
} from '../../src/kafka/changelogKeys';
import { expiryLimits } from '../../src/kafka/partition';
import { SessionStates, stampAfter } from '../../src/kafka/sessionStates';
import { haltThenAcknowledgeExample } from '../support/examples';

/** A real session's state (the example's), open or closed at `closedAt`. */
function state(closedAt: number | null): SessionState {
  const fleet = new Fleet();
  const events = haltThenAcknowledgeExample();
  for (const e of events) fleet.process(e, e.occurredAt);
  const s = fleet.get(events[0]!.sessionId)!;
  return { ...deserializeState(serializeState(s)), closedAt };
}

const open = (seenAt: number) => ({ seenAt, closedSince: null });

describe('SessionStates (restored sessions kept as bytes)', () => {
  it('keeps a copy of the bytes and decodes them on first use', () => {
    const states = new SessionStates();
    const o = state(null);
    const fetched = Buffer.concat([Buffer.from('xx'), serializeState(o)]).subarray(2);
    states.setSerialized('a', fetched, open(5));
    fetched.fill(0); // the fetch buffer is reused: the store must not share it
    expect(states.size).toBe(1);
    expect(states.serializedCount).toBe(1);
    expect(states.peek('a')).toEqual(o);
    const owned = states.owned('a')!;
    expect(owned).toEqual(o);
    expect(states.owned('a')).not.toBe(owned); // each caller gets its own object
    expect(states.serializedCount).toBe(1); // still bytes until a new state is committed
    states.set('a', owned, open(6));
    expect(states.serializedCount).toBe(0);
    expect(states.peek('a')).toBe(owned);
    expect(states.owned('a')).not.toBe(owned); // a copy of a decoded state
    expect(states.owned('a')).toEqual(owned);
    expect(states.stampOf('a')).toEqual(open(6));
    expect(states.owned('missing')).toBeUndefined();
    expect(states.peek('missing')).toBeUndefined();
    expect(states.stampOf('missing')).toBeUndefined();
  });

  it('counts bytes entries across replace, delete and clear, and forgets the stamps with them', () => {
    const states = new SessionStates();
    const bytes = serializeState(state(null));
    states.setSerialized('a', bytes, open(1));
    states.setSerialized('a', bytes, open(1));
    states.setSerialized('b', bytes, open(1));
    expect(states.serializedCount).toBe(2);
    states.delete('a');
    expect(states.serializedCount).toBe(1);
    expect(states.has('a')).toBe(false);
    expect([...states.sessionIds()]).toEqual(['b']);
    expect(states.expired(1_000, { closedMs: 0, idleMs: 0 }, 10)).toEqual(['b']);
    states.clear();
    expect(states.size).toBe(0);
    expect(states.serializedCount).toBe(0);
    expect(states.expired(1_000, { closedMs: 0, idleMs: 0 }, 10)).toEqual([]);
  });
});

describe('the sweep by processing time (contract §4 "Freeing memory", docs/decisions.md 161)', () => {
  const limits = { closedMs: 1_000, idleMs: 10_000 };
  const T = 1_800_000_000_000;

  it('frees a session no record reached for the idle period by the stamp alone, whatever its event times (far past, 2^52−1, none)', () => {
    const states = new SessionStates();
    const yearAgo = { ...state(null), lastEventAt: T - 365 * 86_400_000 };
    const farFuture = { ...state(null), lastEventAt: 2 ** 52 - 1 };
    const none = { ...state(null), lastEventAt: null };
    states.set('year-ago', yearAgo, stampAfter(yearAgo, T, undefined));
    states.set('far-future', farFuture, stampAfter(farFuture, T, undefined));
    states.set('no-event-time', none, stampAfter(none, T, undefined));
    // Held exactly the idle period after the last record reached them, not a moment less...
    expect(states.expired(T + 10_000, limits, 100)).toEqual([]);
    // ...and freed right after it, all three alike.
    expect(states.expired(T + 10_001, limits, 100).sort()).toEqual([
      'far-future',
      'no-event-time',
      'year-ago',
    ]);
  });

  it('frees a closed session the grace period after its SessionClosed was processed, not after its event-time close', () => {
    const states = new SessionStates();
    const closedLongAgo = state(T - 365 * 86_400_000);
    states.set('closed', closedLongAgo, stampAfter(closedLongAgo, T, undefined));
    expect(states.stampOf('closed')).toEqual({ seenAt: T, closedSince: T });
    expect(states.expired(T + 1_000, limits, 100)).toEqual([]);
    expect(states.expired(T + 1_001, limits, 100)).toEqual(['closed']);
    // A later record reaching the closed session keeps its close time: the grace is not renewed.
    const later = stampAfter(closedLongAgo, T + 500, states.closedSince('closed'));
    expect(later).toEqual({ seenAt: T + 500, closedSince: T });
    states.set('closed', closedLongAgo, later);
    expect(states.expired(T + 1_001, limits, 100)).toEqual(['closed']);
  });

  it('a record reaching a session moves it behind the others; the sweep reads oldest first and stops at `max`', () => {
    const states = new SessionStates();
    for (let i = 0; i < 5; i++) states.set(`s${i}`, state(null), open(T + i));
    states.set('s0', state(null), open(T + 100)); // s0 reached again
    const at = T + 10_050;
    expect(states.expired(at, limits, 100)).toEqual(['s1', 's2', 's3', 's4']);
    expect(states.expired(at, limits, 2)).toEqual(['s1', 's2']);
    expect(states.expired(T + 10_101, limits, 100)).toEqual(['s1', 's2', 's3', 's4', 's0']);
  });

  it('a restored record without a stamp gets the restore time, and counts as closed since then when it decodes as closed', () => {
    const states = new SessionStates();
    const restoredAt = T;
    states.setSerialized('old-open', serializeState(state(null)), restoredAt);
    states.setSerialized('old-closed', serializeState(state(T - 86_400_000)), restoredAt);
    states.setSerialized('corrupt', Buffer.from([0xff, 1, 2, 3]), restoredAt);
    // Not yet classified: closed or not is unknown, so nothing is freed as closed...
    expect(states.expired(T + 1_001, limits, 100)).toEqual([]);
    expect(states.classify(2)).toBe(2);
    expect(states.classify(10)).toBe(1);
    expect(states.classify(10)).toBe(0); // each is decoded once
    // ...then the closed one goes the grace period after the restore, the others when idle.
    expect(states.expired(T + 1_001, limits, 100)).toEqual(['old-closed']);
    expect(states.expired(T + 10_001, limits, 100).sort()).toEqual([
      'corrupt',
      'old-closed',
      'old-open',
    ]);
    // Asking for a session's close time classifies it at once.
    const lone = new SessionStates();
    lone.setSerialized('old-closed', serializeState(state(5)), restoredAt);
    expect(lone.closedSince('old-closed')).toBe(restoredAt);
  });

  it('expiryLimits adds the sweep delay to the grace and idle periods', () => {
    expect(expiryLimits({ graceMs: 1_000, idleMs: 10_000, sweepDelayMs: 500 })).toEqual({
      closedMs: 1_500,
      idleMs: 10_500,
    });
  });
});

describe('the stamp in changelog headers', () => {
  it('round-trips open and closed stamps; a record without one, or with a value that is not a time, has none', () => {
    const openStamp = { seenAt: 1_767_300_000_123, closedSince: null };
    const closedStamp = { seenAt: 1_767_300_000_123, closedSince: 1_767_299_000_000 };
    expect(stampOfHeaders(stampHeaders(openStamp))).toEqual(openStamp);
    expect(stampOfHeaders(stampHeaders(closedStamp))).toEqual(closedStamp);
    const asBuffers = {
      [SEEN_AT_HEADER]: Buffer.from('42'),
      [CLOSED_SINCE_HEADER]: Buffer.from('7'),
    };
    expect(stampOfHeaders(asBuffers)).toEqual({ seenAt: 42, closedSince: 7 });
    expect(stampOfHeaders(undefined)).toBeNull();
    expect(stampOfHeaders({})).toBeNull();
    expect(stampOfHeaders({ [SEEN_AT_HEADER]: '-1' })).toBeNull();
    expect(stampOfHeaders({ [SEEN_AT_HEADER]: '1', [CLOSED_SINCE_HEADER]: 'x' })).toBeNull();
  });
});
