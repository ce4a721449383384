import type { ContextEvent } from '../../src/engine/events';
import { generateFleet, generateFleetArray } from '../../src/sim';

const OPTIONS = { sessions: 300, events: 30_000, seed: 12345 };

describe('generateFleet', () => {
  const { events, plans } = generateFleetArray(OPTIONS);

  it('is deterministic: the same seed gives the same events, another seed others', () => {
    const again = generateFleetArray(OPTIONS).events;
    expect(JSON.stringify(again)).toBe(JSON.stringify(events));
    const other = generateFleetArray({ ...OPTIONS, seed: 54321 }).events;
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(events));
  });

  it('the iterator and the array give the same stream, stopping at `events`', () => {
    const it = [...generateFleet(OPTIONS)];
    expect(it).toHaveLength(OPTIONS.events);
    expect(JSON.stringify(it)).toBe(JSON.stringify(events));
  });

  it('keeps per-session seq contiguous from 0 (SessionOpened first), with unique eventIds and non-decreasing occurredAt', () => {
    const bySession = new Map<string, ContextEvent[]>();
    for (const e of events) {
      const list = bySession.get(e.sessionId) ?? [];
      list.push(e);
      bySession.set(e.sessionId, list);
    }
    expect(bySession.size).toBeGreaterThanOrEqual(OPTIONS.sessions);
    for (const list of bySession.values()) {
      list.forEach((e, i) => expect(e.seq).toBe(i));
      expect(list[0]!.type).toBe('SessionOpened');
      for (let i = 1; i < list.length; i++) {
        expect(list[i]!.occurredAt).toBeGreaterThanOrEqual(list[i - 1]!.occurredAt);
      }
      const closed = list.findIndex((e) => e.type === 'SessionClosed');
      if (closed >= 0) expect(closed).toBe(list.length - 1);
    }
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
  });

  it('interleaves sessions and keeps a realistic mix: mostly turns, a few % truncations, requests, commits', () => {
    const count: Record<string, number> = {};
    for (const e of events) count[e.type] = (count[e.type] ?? 0) + 1;
    const share = (t: string) => (count[t] ?? 0) / events.length;
    expect(share('TurnAppended')).toBeGreaterThan(0.85);
    for (const t of ['Truncated', 'CompactionRequested', 'CompactionCommitted']) {
      expect(share(t)).toBeGreaterThan(0.002);
      expect(share(t)).toBeLessThan(0.06);
    }
    expect(count['SpillCompleted']).toBeGreaterThan(0);
    expect(count['SessionClosed']).toBeGreaterThan(0);
    let switches = 0;
    for (let i = 1; i < events.length; i++)
      if (events[i]!.sessionId !== events[i - 1]!.sessionId) switches++;
    expect(switches / events.length).toBeGreaterThan(0.9);
  });

  it('draws policies and profiles per session: mostly TURNS floors, some TOKENS and MESSAGES, truncator in the same unit', () => {
    const all = [...plans.values()];
    const units = { TURNS: 0, TOKENS: 0, MESSAGES: 0 };
    for (const p of all) {
      units[p.policy.floor.unit]++;
      expect(p.policy.truncatorUnit).toBe(p.policy.floor.unit);
      if (p.profile === 'faulty') expect(p.policy.triggerTokens).toBe(p.policy.ceilingTokens);
      else expect(p.policy.triggerTokens).toBeLessThan(p.policy.ceilingTokens);
    }
    expect(units.TURNS / all.length).toBeGreaterThan(0.7);
    expect(units.TOKENS).toBeGreaterThan(0);
    expect(units.MESSAGES).toBeGreaterThan(0);
    const faulty = all.filter((p) => p.profile === 'faulty').length / all.length;
    expect(faulty).toBeGreaterThan(0.05);
    expect(faulty).toBeLessThan(0.17);
    expect(all.some((p) => p.policy.coverage === 'PINNED')).toBe(true);
    expect(all.some((p) => p.policy.spill === 'DISABLED')).toBe(true);
  });

  it('pins the early constraint and plan of every session', () => {
    for (const e of events) {
      if (e.type !== 'TurnAppended') continue;
      if (e.turn === 1) expect(e).toMatchObject({ role: 'USER', pins: ['CONSTRAINT'] });
      if (e.turn === 2) expect(e).toMatchObject({ role: 'ASSISTANT', pins: ['PLAN'] });
    }
  });

  // Generation speed is measured in bench/engine.ts, not asserted here (CI machines are noisy).
  it('generates a large fleet of exactly the requested size', () => {
    let n = 0;
    for (const e of generateFleet({ sessions: 5_000, events: 200_000, seed: 1 }))
      n += e.sessionId.length > 0 ? 1 : 0;
    expect(n).toBe(200_000);
  });
});
