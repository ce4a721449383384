/**
 * Properties of the engine over generated event streams (fast-check):
 * (a) a well-behaved orchestrator is never refused, in every unit and coverage mode;
 * (b) conformance with the seed's `assert_compaction_safe` (contract §5);
 * (c) every hole of every verdict lies in [0, H′) (and in [0, H) when there is no gap head);
 * (d) replaying the same events gives byte-identical output;
 * (e) session state serialization round-trips, and deciding on from a restored state is the same;
 * (f) state size does not grow with the number of unpinned turns (contract §4: O(pins + ranges));
 * (g) evolve never mutates its input state;
 * (h) out-of-band events (contract §4 step 0) take no place in the sequence, and their
 *     redeliveries are recognised by eventId within the last 8.
 */
import fc from 'fast-check';
import {
  type EngineInput,
  type SessionState,
  type Unit,
  deserializeState,
  engineOptions,
  evolve,
  serializeState,
} from '../../src/engine';
import { headIn, knownHead } from '../../src/engine/state';
import { withCanonicalRing } from '../../src/engine/sequence';
import {
  chaosStream,
  conformanceSession,
  openedChaosStream,
  buildChaos,
  seedRefuses,
  wellBehavedSession,
} from '../support/arbitraries';
import { UNITS, auditsOf, deepFreeze, play, policyIn, verdictsOf } from '../support/engineHarness';
import { SessionBuilder } from '../support/sessionBuilder';

const OPTIONS = engineOptions();
const decidedAt = (e: EngineInput) => e.occurredAt ?? 0;

describe('(a) a well-behaved orchestrator', () => {
  it('is never refused and causes no violation or eviction advisory, in every unit and coverage mode', () => {
    fc.assert(
      fc.property(wellBehavedSession, (s) => {
        const p = play(s.events);
        const refused = verdictsOf(p.outputs).filter((v) => v.decision !== 'APPROVE');
        expect(refused.map((v) => [v.requestId, v.reasons])).toEqual([]);
        const bad = auditsOf(p.outputs).filter(
          (a) =>
            a.kind === 'VIOLATION' || a.code === 'PINNED_EVICTED' || a.code === 'CONTENT_EVICTED',
        );
        expect(bad).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('the generator really compacts and truncates, in every unit and coverage mode', () => {
    const samples = fc.sample(wellBehavedSession, { numRuns: 400, seed: 42 });
    for (const unit of UNITS) {
      for (const coverage of ['STRICT', 'PINNED'] as const) {
        const rich = samples.filter(
          (s) =>
            s.unit === unit && s.coverage === coverage && s.requests >= 2 && s.truncations >= 1,
        );
        expect(rich.length).toBeGreaterThan(5);
      }
    }
  });
});

describe('(b) conformance with the seed’s assert_compaction_safe', () => {
  it('for f > 0, t − f ≥ 0, non-empty BUDGET/MANUAL truncations, no spills or acknowledgements: whatever the seed refuses is refused', () => {
    let seedRefusals = 0;
    fc.assert(
      fc.property(conformanceSession, ({ events, checks }) => {
        const p = play(events);
        for (const [i, check] of checks) {
          if (!seedRefuses(check)) continue;
          seedRefusals++;
          const [v] = verdictsOf(p.steps[i]!.outputs);
          expect({ check, decision: v?.decision }).toEqual({ check, decision: 'REFUSE' });
        }
      }),
      { numRuns: 200 },
    );
    expect(seedRefusals).toBeGreaterThan(100);
  });

  it('the seed approves its own worked example once it has 32 turns or more, and the engine refuses it (contract §1)', () => {
    // 52 turns, [0,8) truncated, request tail 40 with input from 8: the seed's floor is [28,40).
    expect(
      seedRefuses({
        sIn: 8,
        t: 40,
        f: 12,
        truncations: [[0, 8]],
        floorUnit: 'TURNS',
        truncatorUnit: 'TURNS',
      }),
    ).toBe(false);
  });
});

/** Every verdict's holes against the state it was decided on. */
function checkHoles(events: readonly EngineInput[]): void {
  const p = play(events);
  p.steps.forEach((step) => {
    // Without a ring every event leaves a state.
    const s = step.state!;
    for (const o of step.outputs) {
      if (o.record === 'verdict') {
        const holes = o.value.reasons.flatMap((r) => r.holes);
        if (!s.policy) {
          expect(holes).toEqual([]);
          continue;
        }
        const u = s.policy.floor.unit;
        const hp = knownHead(s, u);
        for (const h of holes) {
          expect(h.unit).toBe(u);
          expect(h.start).toBeGreaterThanOrEqual(0);
          expect(h.start).toBeLessThan(h.end);
          expect(h.end).toBeLessThanOrEqual(hp);
          if (s.gapHead === null) expect(h.end).toBeLessThanOrEqual(headIn(s, u));
        }
      } else if (o.record === 'spill-request' && s.policy) {
        const u = s.policy.floor.unit;
        expect(o.value.unit).toBe(u);
        expect(o.value.range).toEqual({ start: 0, end: knownHead(s, u) });
        for (const h of o.value.holes) expect(h.end).toBeLessThanOrEqual(knownHead(s, u));
      }
    }
  });
}

describe('(c) holes lie within the known head', () => {
  // The contract names holes up to H′ = max(H, Hg): EVENT_GAP's hole [0,Hg) can pass H. What is
  // tested: every hole ⊆ [0, H′) of the state decided on, in U, non-empty; ⊆ [0, H) when Hg is
  // none; unknown sessions name no holes; a spill request asks for exactly [0, H′).
  it('for sessions with a policy (gaps, conflicts, redeliveries, foreign units included)', () => {
    fc.assert(fc.property(openedChaosStream, checkHoles), { numRuns: 150 });
  });

  it('for any stream, unknown sessions and late SessionOpened included', () => {
    fc.assert(fc.property(chaosStream, checkHoles), { numRuns: 100 });
  });

  it('an EVENT_GAP hole reaches Hg beyond H (why the bound is H′, not H)', () => {
    const b = new SessionBuilder('s').open(policyIn('TURNS', 2)).turns(4, 1);
    b.truncate('TURNS', 6, 8).request('r', 'TURNS', 0, 2, 2);
    const v = verdictsOf(play(b.events).outputs)[0]!;
    expect(v.reasons[0]).toMatchObject({ code: 'EVENT_GAP', holes: [{ start: 0, end: 8 }] });
  });
});

describe('(d) determinism', () => {
  it('replaying the same events gives byte-identical output', () => {
    fc.assert(
      fc.property(openedChaosStream, (events) => {
        const a = play(events).outputs;
        const b = play(events).outputs;
        expect(JSON.stringify(b)).toBe(JSON.stringify(a));
      }),
      { numRuns: 100 },
    );
  });

  it('a session’s outputs do not depend on other sessions interleaved with it', () => {
    const cmds = fc.array(fc.nat(), { maxLength: 140 });
    fc.assert(
      fc.property(openedChaosStream, chaosStream, cmds, (mine, theirs, schedule) => {
        const others = theirs.map((e) => ({ ...e, sessionId: 'other' }));
        const merged: EngineInput[] = [];
        let i = 0;
        let j = 0;
        for (const k of schedule) {
          if (k % 2 === 0 && i < mine.length) merged.push(mine[i++]!);
          else if (j < others.length) merged.push(others[j++]!);
        }
        merged.push(...mine.slice(i), ...others.slice(j));
        const alone = play(mine).outputs;
        const together = play(merged).outputs.filter((o) => o.value.sessionId === 'chaos');
        expect(JSON.stringify(together)).toBe(JSON.stringify(alone));
      }),
      { numRuns: 60 },
    );
  });
});

describe('(e) state serialization', () => {
  it('round-trips every state reached (gaps, conflicts, unknown sessions included), and deciding on from it is the same', () => {
    fc.assert(
      fc.property(fc.oneof(openedChaosStream, chaosStream), (events) => {
        let s: SessionState | undefined;
        for (const e of events) {
          const r = evolve(s, e, decidedAt(e), OPTIONS);
          // Without a ring every event leaves a state.
          const next = r.state!;
          const restored = deserializeState(serializeState(next));
          expect(restored).toStrictEqual(withCanonicalRing(next));
          if (s !== undefined) {
            const again = evolve(deserializeState(serializeState(s)), e, decidedAt(e), OPTIONS);
            expect(JSON.stringify(again.outputs)).toBe(JSON.stringify(r.outputs));
            expect(withCanonicalRing(again.state!)).toStrictEqual(withCanonicalRing(next));
          }
          s = r.state;
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe('(f) state size does not grow with unpinned turns', () => {
  /** Same pins, truncations, compactions and requests; only the number of plain turns differs. */
  function sizeAfter(unit: Unit, plainTurns: number): number {
    const b = new SessionBuilder('size').open(policyIn(unit, unit === 'TOKENS' ? 300 : 6));
    b.turn(40, 'SYSTEM').turn(25, 'USER', ['CONSTRAINT']).turn(30, 'ASSISTANT', ['PLAN']);
    for (let i = 0; i < plainTurns; i++) b.turn(10 + (i % 7), i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL');
    const h = b.heads;
    const head = unit === 'TURNS' ? h.turns : unit === 'TOKENS' ? h.tokens : h.messages;
    const f = unit === 'TOKENS' ? 300 : 6;
    b.truncate(unit, 0, 2);
    b.request('c1', unit, 0, head - 2 * f, head - 2 * f);
    b.commit('c1', unit, 0, head - 2 * f, head - 2 * f);
    b.turn(12).turn(12, 'USER', ['COMMITMENT']).turn(12);
    b.request('c2', unit, 0, head - f, head - f);
    const p = play(b.events);
    return serializeState(p.state).length;
  }

  it.each(UNITS)(
    'in %s: 50 vs 5,000 plain turns differ by a few bytes of varint growth',
    (unit) => {
      const small = sizeAfter(unit, 50);
      const large = sizeAfter(unit, 5_000);
      expect(large - small).toBeLessThanOrEqual(40);
      expect(large).toBeLessThan(1_200);
    },
  );

  it('growth is logarithmic: 5,000 vs 10,000 turns differ by a few bytes too', () => {
    expect(sizeAfter('TOKENS', 10_000) - sizeAfter('TOKENS', 5_000)).toBeLessThanOrEqual(40);
  });

  it('pins do cost state: 200 separate pinned turns out of 400 add at least 2 bytes each', () => {
    const build = (pinned: boolean) => {
      const b = new SessionBuilder('pins').open(policyIn('TURNS', 6));
      for (let i = 0; i < 400; i++) b.turn(10, 'USER', pinned && i % 2 ? ['CONSTRAINT'] : []);
      return serializeState(play(b.events).state).length;
    };
    expect(build(true) - build(false)).toBeGreaterThanOrEqual(400);
  });
});

describe('(g) purity', () => {
  it('evolve never mutates its input state or event (deep-frozen, and compared to a clone)', () => {
    fc.assert(
      fc.property(fc.oneof(openedChaosStream, chaosStream), (events) => {
        let s: SessionState | undefined;
        for (const e of events) {
          const before = s === undefined ? undefined : structuredClone(s);
          const input = structuredClone(e);
          if (s !== undefined) deepFreeze(s);
          deepFreeze(e);
          const r = evolve(s, e, decidedAt(e), OPTIONS);
          expect(s).toEqual(before);
          expect(e).toEqual(input);
          s = r.state;
        }
      }),
      { numRuns: 30 },
    );
  });

  it('the chaos generator builds streams with every kind of input', () => {
    const kinds = new Set<string>();
    for (const events of fc.sample(chaosStream, { numRuns: 200, seed: 7 }))
      for (const e of events) kinds.add(e.type);
    expect([...kinds].sort()).toEqual(
      [
        'CompactionCommitted',
        'CompactionRequested',
        'LossAcknowledged',
        'MalformedRequest',
        'SessionClosed',
        'SessionOpened',
        'SpillCompleted',
        'SpillFailed',
        'Truncated',
        'TurnAppended',
      ].sort(),
    );
    expect(buildChaos('x', [{ k: 'skip', n: 1 }])).toEqual([]);
  });
});

describe('(h) step 0: out-of-band events', () => {
  /** An out-of-band event of each kind, for a stream's session, at the stream's last time. */
  const outOfBandArb = (sessionId: string, at: number) =>
    fc
      .record({
        kind: fc.constantFrom('SpillCompleted', 'SpillFailed', 'LossAcknowledged'),
        id: fc.string({ minLength: 1, maxLength: 6 }),
        start: fc.nat(30),
        len: fc.nat(30),
        unit: fc.constantFrom<Unit>(...UNITS),
      })
      .map(({ kind, id, start, len, unit }): EngineInput => {
        const envelope = {
          sessionId,
          seq: null,
          eventId: `oob-${id}`,
          occurredAt: at,
          signature: null,
        };
        const range = { start, end: start + len };
        if (kind === 'SpillCompleted')
          return { ...envelope, type: kind, spillRequestId: id, handle: 'file:///x', unit, range };
        if (kind === 'SpillFailed')
          return { ...envelope, type: kind, spillRequestId: id, error: 'x' };
        return { ...envelope, type: kind, unit, range, by: 'me', reason: 'drill' };
      });

  it('takes no place in the sequence: last seq and the remembered seq eventIds stay, and no gap is revealed', () => {
    fc.assert(
      fc.property(
        openedChaosStream.chain((events) =>
          fc.tuple(
            fc.constant(events),
            outOfBandArb('chaos', events[events.length - 1]!.occurredAt ?? 0),
          ),
        ),
        ([events, oob]) => {
          const before = play(events).state;
          const after = play([...events, oob]);
          expect(after.last.notes).not.toContain('gap');
          if (after.last.notes.includes('state-dropped')) {
            // An out-of-band event advances the session (rev 12): past the grace or idle
            // period it drops the state first, and the unknown state it finds has no last seq.
            expect(after.state.lastSeq).toBe(-1);
            expect(after.state.recent).toEqual([]);
            return;
          }
          expect(after.state.lastSeq).toBe(before.lastSeq);
          expect(after.state.recent).toEqual(before.recent);
          expect(after.state.gapHead === null || before.gapHead !== null).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a redelivery right after is ignored entirely (same state, no output); after 8 other out-of-band events it is accepted afresh', () => {
    fc.assert(
      fc.property(
        openedChaosStream.chain((events) =>
          fc.tuple(
            fc.constant(events),
            outOfBandArb('chaos', events[events.length - 1]!.occurredAt ?? 0),
            fc.array(outOfBandArb('chaos', events[events.length - 1]!.occurredAt ?? 0), {
              minLength: 8,
              maxLength: 8,
            }),
          ),
        ),
        ([events, oob, others]) => {
          const once = play([...events, oob]);
          const twice = play([...events, oob, oob]);
          expect(twice.last.outputs).toEqual([]);
          expect(twice.last.notes).toEqual(['duplicate']);
          expect(twice.state).toEqual(once.state);
          const distinct = others.map((o, i) => ({ ...o, eventId: `other-${i}` }) as EngineInput);
          const later = play([...events, oob, ...distinct, oob]);
          expect(later.last.notes).not.toContain('duplicate');
        },
      ),
      { numRuns: 200 },
    );
  });
});
