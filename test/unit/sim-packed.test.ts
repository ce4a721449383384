import type { ContextEvent } from '../../src/engine/events';
import { generateFleetArray } from '../../src/sim';
import { PackedEvents, generateFleetPacked } from '../../bench/packed';

describe('PackedEvents', () => {
  const options = { sessions: 150, events: 20_000, seed: 99, faultyShare: 0.3 };
  const { events } = generateFleetArray(options);

  it('materializes exactly the events generated (every type), as fresh objects', () => {
    const { packed } = generateFleetPacked(options);
    expect(packed.length).toBe(events.length);
    expect(new Set(events.map((e) => e.type)).size).toBeGreaterThanOrEqual(7);
    // Same fields in the same order, and the same types.
    expect(JSON.stringify([...packed])).toBe(JSON.stringify(events));
    expect(events.every((e, i) => packed.typeOf(i) === e.type)).toBe(true);
    expect(packed.get(5)).toEqual(events[5]);
    expect(packed.get(5)).not.toBe(packed.get(5));
  });

  it('packs any event stream, growing as needed: stored eventIds, null occupancy, SpillFailed, several pins', () => {
    const base = { sessionId: 'x', occurredAt: 1 };
    const odd: ContextEvent[] = [
      { type: 'SessionClosed', ...base, seq: 0, eventId: 'not-derived' },
      {
        type: 'CompactionRequested',
        ...base,
        seq: 1,
        eventId: 'x-1',
        requestId: 'r',
        unit: 'TOKENS',
        summaryInput: { start: 0, end: 10 },
        tailStart: 10,
        occupancyTokens: null,
      },
      {
        type: 'SpillFailed',
        ...base,
        seq: 2,
        eventId: 'x-2',
        spillRequestId: 'x:r:1',
        error: 'disk full',
        signature: null,
      },
      {
        type: 'TurnAppended',
        ...base,
        seq: 3,
        eventId: 'x-3',
        turn: 0,
        tokens: { start: 0, end: 2 ** 40 },
        messages: { start: 0, end: 1 },
        role: 'TOOL_CALL',
        pins: ['OPEN_TOOL_CALL', 'CONSTRAINT'],
      },
      {
        type: 'Truncated',
        ...base,
        seq: 4,
        eventId: 'x-4',
        unit: 'MESSAGES',
        range: { start: 0, end: 1 },
        reason: 'SUMMARY_EVICTED',
      },
    ];
    const packed = PackedEvents.from(odd, 1);
    expect([...packed]).toEqual(odd);
    expect(() => packed.get(odd.length)).toThrow(RangeError);
  });
});
