/**
 * Memory bounded per instance, failing closed, through the planner (src/kafka/batch/planner.ts
 * asking the capacity gate, src/kafka/capacity/): at CG_MAX_SESSIONS no new session state is created, events of a
 * session not held are counted and not stored, its requests are refused UNKNOWN_SESSION (HALT,
 * naming the cap), held sessions go on, and a session refused at capacity starts blind once room
 * frees, also after a restart (its filter chunks are in the changelog).
 */
import { Fleet, engineOptions } from '../../src/engine';
import type { EngineInput } from '../../src/engine/evolve';
import { MAX_POSITION } from '../../src/engine/state';
import type { BatchPlan, PlanContext } from '../../src/kafka/batch/plan';
import { BatchPlanner } from '../../src/kafka/batch/planner';
import { SessionCapacity } from '../../src/kafka/capacity/gate';
import { refusedChunkOfKey, sessionOfKey } from '../../src/kafka/changelogKeys';
import { RefusedFilter, RefusedFilterView } from '../../src/kafka/capacity/refusedFilter';
import { expiryLimits } from '../../src/kafka/partition';
import { SessionStates } from '../../src/kafka/sessionStates';
import { verdictType } from '../../src/schema/schemas';
import { SessionBuilder } from '../support/sessionBuilder';
import { DECIDED_AT, planContext } from '../support/planContext';
import { testRing } from '../support/testRing';
import { unsignedJunk } from '../support/unsignedJunk';

const options = engineOptions();

function context(committed: SessionStates, max: number, refused: RefusedFilter): PlanContext {
  return planContext({
    committed,
    capacity: new SessionCapacity(max, () => committed.size),
    refused,
  });
}

function plan(events: readonly EngineInput[], ctx: PlanContext): BatchPlan {
  const planner = new BatchPlanner({ topic: 'in', partition: 0 }, ctx);
  events.forEach((e, i) =>
    planner.add(
      { key: Buffer.from(e.sessionId), value: null, offset: String(i) },
      { ok: true, input: e },
    ),
  );
  return planner.finish(String(events.length));
}

/** A held session's state, committed. */
function held(committed: SessionStates, id: string): void {
  const fleet = new Fleet(options);
  for (const e of new SessionBuilder(id, 1).open().turns(3).events) fleet.process(e, DECIDED_AT);
  committed.set(id, fleet.get(id)!);
}

/** A new session whose request leaves nothing out of the verbatim window (t = 0). */
const newcomer = (id: string) =>
  new SessionBuilder(id, 1_000).open().turns(4).request('r0', 'TURNS', 0, 0, 0).events;

const verdicts = (p: BatchPlan) =>
  (p.sends.get('verdicts') ?? []).map((m) => verdictType.fromBuffer(m.value as Buffer));
const statesWritten = (p: BatchPlan) =>
  (p.sends.get('changelog') ?? [])
    .map((m) => sessionOfKey(String(m.key)))
    .filter((id): id is string => id !== null);

describe('at the session cap', () => {
  it('stores nothing of a new session, refuses its request UNKNOWN_SESSION (HALT, naming the cap), and goes on with held ones', () => {
    const committed = new SessionStates();
    held(committed, 'a');
    held(committed, 'b');
    // Without a cap, the newcomer's request is approved: nothing leaves the verbatim window.
    const free = new Fleet(options);
    const decisions = newcomer('c')
      .flatMap((e) => free.process(e, DECIDED_AT).outputs)
      .flatMap((o) => (o.record === 'verdict' ? [o.value.decision] : []));
    expect(decisions).toEqual(['APPROVE']);

    const filter = new RefusedFilter();
    const aMore = new SessionBuilder('a', 1).open().turns(3).turns(2).events.slice(4);
    const events = [...newcomer('c'), ...aMore];
    const p = plan(events, context(committed, 2, filter));

    expect(verdicts(p)).toEqual([
      expect.objectContaining({
        sessionId: 'c',
        requestId: 'r0',
        decision: 'REFUSE',
        basis: null,
        action: 'HALT',
        rulesChecked: ['UNKNOWN_SESSION', 'INVALID_REQUEST'],
        reasons: [expect.objectContaining({ code: 'UNKNOWN_SESSION' })],
        spillRequestId: null,
        diagnostic: expect.stringContaining('limit of 2 sessions (CG_MAX_SESSIONS)'),
      }),
    ]);
    expect(p.sends.get('spills')).toBeUndefined();
    expect(p.sends.get('dlq')).toBeUndefined();
    expect(statesWritten(p)).toEqual(['a']);
    expect(p.overlay.has('c')).toBe(false);
    expect(p.atCapacity).toEqual({ events: newcomer('c').length, sessions: 1 });
    // Its id joined the filter, in a chunk the changelog carries with the batch.
    expect(p.refused!.has('c')).toBe(true);
    expect(filter.has('c')).toBe(false); // only once committed
    const chunks = (p.sends.get('changelog') ?? []).filter(
      (m) => refusedChunkOfKey(String(m.key)) !== null,
    );
    expect(chunks).toHaveLength(1);
    expect(p.reserved).toBe(0);
  });

  it('reserves room for the sessions a batch creates: the third of a cap of 2 is refused in the same batch', () => {
    const committed = new SessionStates();
    const ctx = context(committed, 2, new RefusedFilter());
    const p = plan([...newcomer('x'), ...newcomer('y'), ...newcomer('z')], ctx);
    expect(verdicts(p).map((v) => [v.sessionId, v.decision])).toEqual([
      ['x', 'APPROVE'],
      ['y', 'APPROVE'],
      ['z', 'REFUSE'],
    ]);
    expect(p.reserved).toBe(2);
    expect(ctx.capacity!.tryReserve()).toBe(false);
    // Committed: the states are held, the reservations given back; still full.
    for (const [id, s] of p.overlay) committed.set(id, s!);
    ctx.capacity!.release(p.reserved);
    expect(ctx.capacity!.tryReserve()).toBe(false);
    committed.delete('x');
    expect(ctx.capacity!.tryReserve()).toBe(true);
  });

  it('answers a malformed request of a session not held, and stores nothing', () => {
    const committed = new SessionStates();
    held(committed, 'a');
    const p = plan(
      [
        {
          type: 'MalformedRequest',
          sessionId: 'm',
          seq: 3,
          requestId: 'bad',
          eventId: null,
          occurredAt: 5,
          error: 'field "unit": expected one of …',
        },
      ],
      context(committed, 1, new RefusedFilter()),
    );
    expect(verdicts(p).map((v) => [v.requestId, v.rulesChecked, v.action])).toEqual([
      ['bad', ['INVALID_REQUEST'], 'HALT'],
    ]);
    expect(statesWritten(p)).toEqual([]);
    expect(p.atCapacity).toEqual({ events: 1, sessions: 1 });
  });
});

describe('a session refused at capacity, once room frees', () => {
  it('starts blind (F at 2^52 − 1 in every unit), so its t = 0 request is refused, also after a restart', () => {
    const committed = new SessionStates();
    held(committed, 'a');
    const filter = new RefusedFilter();
    const refused = plan(newcomer('c').slice(0, 3), context(committed, 1, filter));
    // The batch committed: its chunks are the filter's, and the changelog has them.
    refused.refused!.commit();
    const restored = new RefusedFilter();
    for (const m of refused.sends.get('changelog')!) {
      const chunk = refusedChunkOfKey(String(m.key));
      if (chunk !== null) restored.restore(chunk, m.value as Buffer);
    }
    expect(restored.has('c')).toBe(true);

    const rest = newcomer('c').slice(3);
    for (const f of [filter, restored]) {
      const p = plan(rest, context(committed, 2, f));
      expect(p.overlay.get('c')!.evidenceHead).toEqual({
        TURNS: MAX_POSITION,
        TOKENS: MAX_POSITION,
        MESSAGES: MAX_POSITION,
      });
      expect(verdicts(p)).toEqual([
        expect.objectContaining({
          sessionId: 'c',
          decision: 'REFUSE',
          rulesChecked: ['UNKNOWN_SESSION', 'INVALID_REQUEST'],
        }),
      ]);
      expect(p.atCapacity.events).toBe(0);
    }
    // A session never refused starts as any new one.
    const p = plan(newcomer('fresh'), context(committed, 2, restored));
    expect(verdicts(p).map((v) => v.decision)).toEqual(['APPROVE']);
  });
});

describe('the refused filter', () => {
  const ids = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}-${i}-${(i * 2654435761) % 1_000_003}`);

  function filled(n: number): RefusedFilter {
    const filter = new RefusedFilter();
    const view = new RefusedFilterView(filter);
    for (const id of ids('refused', n)) view.add(id);
    view.commit();
    return filter;
  }

  it('has every id added (no false negatives), and hardly any other at 60k ids', () => {
    const filter = filled(60_000);
    expect(ids('refused', 60_000).every((id) => filter.has(id))).toBe(true);
    const others = ids('other', 60_000);
    const falsePositives = others.filter((id) => filter.has(id)).length / others.length;
    expect(falsePositives).toBeLessThan(0.001);
    // 8 bits per id, some shared: a little under 60k × 8 of the 4 Mbit.
    expect(filter.fill).toBeGreaterThan(0.1);
    expect(filter.fill).toBeLessThan((60_000 * 8) / 2 ** 22);
  });

  it('fails closed when over-full: at 80 % of its bits set, about 0.8^8 of new ids are taken for refused', () => {
    // Chunks as a changelog would restore them, each bit set with probability 0.8.
    let seed = 42;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const filter = new RefusedFilter();
    for (let i = 0; i < 16; i++) {
      const chunk = Buffer.alloc(32 * 1024);
      for (let b = 0; b < chunk.length; b++)
        for (let bit = 0; bit < 8; bit++) if (random() < 0.8) chunk[b] = chunk[b]! | (1 << bit);
      filter.restore(i, chunk);
    }
    expect(filter.fill).toBeCloseTo(0.8, 2);
    const others = ids('other', 20_000);
    const falsePositives = others.filter((id) => filter.has(id)).length / others.length;
    expect(falsePositives).toBeGreaterThan(0.12);
    expect(falsePositives).toBeLessThan(0.22);
  });

  it('takes a chunk of the wrong size as full, and a tombstone as empty', () => {
    const filter = new RefusedFilter();
    for (let i = 0; i < 16; i++) filter.restore(i, Buffer.alloc(3));
    expect(filter.fill).toBe(1);
    expect(filter.has('anyone')).toBe(true);
    for (let i = 0; i < 16; i++) filter.restore(i, null);
    expect(filter.fill).toBe(0);
    expect(filter.has('anyone')).toBe(false);
  });

  it("changes a batch's own copies of the chunks it touches until it commits", () => {
    const filter = new RefusedFilter();
    const view = new RefusedFilterView(filter);
    view.add('s');
    expect(view.has('s')).toBe(true);
    expect(filter.has('s')).toBe(false);
    expect([...view.changed().keys()]).toHaveLength(1);
    view.commit();
    expect(filter.has('s')).toBe(true);
  });
});

describe('a session freed by the wall-clock sweep (docs/decisions.md 124)', () => {
  it('joins the refused filter, so a late event of it starts blind and its t = 0 request is refused, where a never-seen session is approved', () => {
    const committed = new SessionStates();
    held(committed, 'gone');
    const filter = new RefusedFilter();
    const swept = plan(
      [],
      planContext({
        committed,
        capacity: new SessionCapacity(10, () => committed.size),
        refused: filter,
        sweep: (overlay) => overlay.set('gone', null),
      }),
    );
    expect(swept.overlay.get('gone')).toBeNull();
    swept.refused!.commit();
    committed.delete('gone');
    expect(filter.has('gone')).toBe(true);

    // Late events without a SessionOpened: a turn, then a request that leaves nothing out.
    const late = (id: string) =>
      new SessionBuilder(id, 9_000).turns(2).request('late', 'TURNS', 0, 0, 0).events;
    const back = plan(late('gone'), context(committed, 10, filter));
    expect(back.overlay.get('gone')?.evidenceHead?.TURNS).toBe(MAX_POSITION);
    expect(verdicts(back)).toEqual([
      expect.objectContaining({ sessionId: 'gone', decision: 'REFUSE' }),
    ]);
    expect(verdicts(back)[0]!.rulesChecked).toContain('UNKNOWN_SESSION');
    const never = plan(late('never-seen'), context(committed, 10, filter));
    expect(verdicts(never).map((v) => v.decision)).toEqual(['APPROVE']);
  });
});

describe('unsigned out-of-band junk under a key ring (contract §4b)', () => {
  const ring = testRing([['ACKNOWLEDGE', 'SPILL']]);
  const junk = unsignedJunk;
  function ringContext(committed: SessionStates, max: number, refused: RefusedFilter) {
    return planContext({
      committed,
      capacity: new SessionCapacity(max, () => committed.size),
      refused,
      engine: engineOptions({ trustedKeys: ring.engine }),
    });
  }

  it('below the cap, creates no session and takes no place: 60 junk records leave the cap of 2 free for new sessions', () => {
    const committed = new SessionStates();
    const ctx = ringContext(committed, 2, new RefusedFilter());
    const events = [
      ...Array.from({ length: 60 }, (_, i) => junk(`j${i}`)),
      ...newcomer('x'),
      ...newcomer('y'),
    ];
    const p = plan(events, ctx);
    expect([...p.overlay.keys()].sort()).toEqual(['x', 'y']);
    expect(verdicts(p).map((v) => [v.sessionId, v.decision])).toEqual([
      ['x', 'APPROVE'],
      ['y', 'APPROVE'],
    ]);
    expect(p.atCapacity.sessions).toBe(0);
  });

  it('at the cap, does not mark the session refused, so it starts as any new one (not blind) once room frees', () => {
    const committed = new SessionStates();
    held(committed, 'a');
    const filter = new RefusedFilter();
    const atCap = plan([junk('victim')], ringContext(committed, 1, filter));
    atCap.refused?.commit();
    expect(filter.has('victim')).toBe(false);
    expect(atCap.atCapacity.sessions).toBe(0);
    const later = plan(newcomer('victim'), ringContext(committed, 2, filter));
    expect(later.overlay.get('victim')!.evidenceHead).toBeNull();
    expect(verdicts(later).map((v) => v.decision)).toEqual(['APPROVE']);
  });
});

describe('the cap cannot be held or freed on an attacker’s timing (docs/decisions.md 161)', () => {
  const limits = expiryLimits({
    graceMs: 3_600_000,
    idleMs: 30 * 86_400_000,
    sweepDelayMs: 3_600_000,
  });

  /** A plan made at processing time `at`, committed as the partition commits it. */
  function commitAt(
    committed: SessionStates,
    filter: RefusedFilter,
    events: EngineInput[],
    at: number,
    max: number,
  ) {
    const p = plan(events, { ...context(committed, max, filter), clock: () => at });
    for (const [id, s] of p.overlay)
      if (s === null) committed.delete(id);
      else committed.set(id, s, p.stamps.get(id));
    p.refused?.commit();
    return p;
  }

  it('junk sessions stamped far in the past, far in the future and now fill a cap of 3 for the idle period of processing time, then all go together', () => {
    const committed = new SessionStates();
    const filter = new RefusedFilter();
    const T = DECIDED_AT;
    const junk = [
      new SessionBuilder('junk-past', 1).open().events,
      new SessionBuilder('junk-future', 2 ** 52 - 1 - 10_000).open().events,
      new SessionBuilder('junk-now', T).open().events,
    ].flat();
    commitAt(committed, filter, junk, T, 3);
    expect(committed.size).toBe(3);
    // 10 s later (when the old rule freed the far-past one) nothing is freed: the victim's
    // new session is refused at the cap, and comes back blind later (never approved by it).
    expect(committed.expired(T + 10_000, limits, 100)).toEqual([]);
    const refusedVictim = commitAt(committed, filter, newcomer('victim'), T + 10_000, 3);
    expect(verdicts(refusedVictim).map((v) => [v.decision, v.action])).toEqual([
      ['REFUSE', 'HALT'],
    ]);
    expect(filter.has('victim')).toBe(true);
    // Nor a moment before the idle period and the sweep delay have passed since they were reached.
    const idle = limits.idleMs;
    expect(committed.expired(T + idle, limits, 100)).toEqual([]);
    expect(committed.expired(T + idle + 1, limits, 100).sort()).toEqual([
      'junk-future',
      'junk-now',
      'junk-past',
    ]);
  });
});
