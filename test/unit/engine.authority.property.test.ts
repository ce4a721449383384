/**
 * Contract §4b and §8 (authority), as properties of the engine, with the engine checked against
 * the reference model (test/support/differential.ts) on every stream it runs here:
 * - events of a producer without a key of the right role, mixed into an honest stream, never
 *   turn a REFUSE into an APPROVE;
 * - each kind of unauthorized event changes no P, A or X, is reported as UNAUTHORIZED_EVENT
 *   naming the failed check, and leaves the next request refused, where the same event signed
 *   correctly heals as an unsigned one does without a ring.
 */
import fc from 'fast-check';
import {
  type EngineInput,
  type Output,
  type SessionState,
  type Unit,
  type Verdict,
  engineOptions,
  evolve,
} from '../../src/engine';
import { SMALL_GRACE_MS, SMALL_IDLE_MS, keylessStream } from '../support/arbitraries';
import { differential } from '../support/differential';
import { UNITS, pairs, policyIn } from '../support/engineHarness';
import type { Failure } from '../support/referenceAuthority';
import { SessionBuilder } from '../support/sessionBuilder';
import { type AuthKind, type SignableEvent, authorize } from '../support/signedEvents';
import { type TestRing, testRing } from '../support/testRing';

const SMALL = { graceMs: SMALL_GRACE_MS, idleMs: SMALL_IDLE_MS };

/** Every step's outputs and state, through the engine. */
function run(
  events: readonly EngineInput[],
  ring: TestRing,
): { outputs: Output[]; state: SessionState | undefined }[] {
  const options = engineOptions({ ...SMALL, trustedKeys: ring.engine });
  let s: SessionState | undefined;
  return events.map((e, i) => {
    const r = evolve(s, e, 5_000_000 + i, options);
    s = r.state;
    return { outputs: [...r.outputs], state: r.state };
  });
}

const verdicts = (steps: { outputs: Output[] }[]): Verdict[] =>
  steps.flatMap((st) =>
    st.outputs.filter((o) => o.record === 'verdict').map((o) => o.value as Verdict),
  );

describe('authority (contract §4b, §8): a producer without a key of the right role', () => {
  it('never turns a REFUSE into an APPROVE: the stream with its events removed refuses at least as much', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(keylessStream, ({ roles, events, junk }) => {
        const ring = testRing(roles);
        const mixed = run(events, ring);
        const clean = verdicts(
          run(
            events.filter((_, i) => !junk[i]),
            ring,
          ),
        );
        const withJunk = verdicts(mixed);
        expect(withJunk.length).toBe(clean.length);
        clean.forEach((v, i) => {
          if (v.decision === 'REFUSE')
            expect({ i, request: v.requestId, decision: withJunk[i]!.decision }).toEqual({
              i,
              request: v.requestId,
              decision: 'REFUSE',
            });
        });
        mixed.forEach((st, i) => {
          if (st.outputs.some((o) => o.record === 'audit' && o.value.code === 'UNAUTHORIZED_EVENT'))
            seen.add(events[i]!.type);
        });
      }),
      { numRuns: 200 },
    );
    // The junk reached the engine as each signable type.
    expect([...seen].sort()).toEqual(['LossAcknowledged', 'SpillCompleted', 'SpillFailed']);
  });
});

// ---------------------------------------------------------------------------------------------
// One unauthorized event of each kind, against the same event signed correctly.

type Kind = Exclude<AuthKind, 'signed'> | 'replayed';
type Target = 'ack' | 'spill' | 'spillFailed';

const FAILED: Record<Kind, Failure> = {
  unsigned: 'no signature',
  forged: 'bad signature',
  wrongRole: 'key without the role',
  unknownKey: 'unknown key',
  expired: 'expired',
  expiredLast: 'expired',
  nonCanonical: 'bad signature',
  replayed: 'expired',
};

/** One key per role, so a key without the role exists for every event type. */
const RING = testRing([['ACKNOWLEDGE'], ['SPILL']]);

interface Scenario {
  unit: Unit;
  turns: number;
  lost: number;
  kind: Kind;
  target: Target;
  oob: boolean;
  pick: number;
  /** false: the twin stream, with the event signed correctly (and, replayed, long valid). */
  unauthorized: boolean;
}

/**
 * A session refused with SPILL (a truncation nobody summarized), then the event under test,
 * then the same request under a new requestId. Returns the events and the index of the event
 * under test.
 */
function scenario(x: Scenario): { events: EngineInput[]; at: number } {
  const b = new SessionBuilder('auth').open(policyIn(x.unit, 0));
  for (let i = 0; i < x.turns; i++) b.turn(3, 'USER', [], 2);
  const h = x.unit === 'TURNS' ? x.turns : x.unit === 'TOKENS' ? 3 * x.turns : 2 * x.turns;
  b.truncate(x.unit, 0, x.lost);
  b.request('r1', x.unit, x.lost, h, h);
  const pending = `auth:r1:${b.nextSeq - 1}`;
  const sign =
    (kind: AuthKind, validity = 60_000) =>
    (e: EngineInput) =>
      authorize(e as SignableEvent, kind, RING, x.pick, validity);
  const send = (make: () => void, kind: AuthKind, validity?: number, oob = x.oob) => {
    if (oob) b.outOfBand();
    make();
    b.mapLast(sign(kind, validity));
  };
  const target = () =>
    x.target === 'ack'
      ? b.acknowledge(x.unit, 0, h)
      : x.target === 'spill'
        ? b.spilled(pending, x.unit, 0, h)
        : b.spillFailed(pending);
  if (x.kind === 'replayed') {
    // A correctly signed acknowledgement, used up by a new loss, pushed out of the out-of-band
    // window by 8 later out-of-band events, then copied off the topic and sent again.
    send(() => b.acknowledge(x.unit, 0, h), 'signed', x.unauthorized ? 0 : 3_600_000, true);
    const original = b.last;
    b.truncate(x.unit, x.lost, x.lost + 1); // a new loss inside the summary input
    for (let i = 0; i < 8; i++) send(() => b.spillFailed(`other-${i}`), 'signed', 0, true);
    b.events.push(original);
  } else if (x.kind === 'expiredLast') {
    // Back-dated below the session's last event; its signature is valid at its own occurredAt.
    b.next({ occurredAt: b.last.occurredAt - 1 });
    send(target, x.unauthorized ? 'expiredLast' : 'signed');
  } else send(target, x.unauthorized ? x.kind : 'signed');
  const at = b.events.length - 1;
  b.request('r2', x.unit, x.lost, h, h);
  return { events: b.events, at };
}

const scenarioArb = (kind: fc.Arbitrary<Kind>) =>
  fc.record({
    unit: fc.constantFrom<Unit>(...UNITS),
    turns: fc.integer({ min: 5, max: 12 }),
    lost: fc.integer({ min: 1, max: 3 }),
    kind,
    target: fc.constantFrom<Target>('ack', 'spill', 'spillFailed'),
    oob: fc.boolean(),
    pick: fc.nat({ max: 7 }),
    unauthorized: fc.constant(true),
  });

const healingSets = (s: SessionState) => ({
  spilled: pairs(s.spilled[s.unit!]),
  ackPermanent: pairs(s.ackPermanent),
  ackOnce: pairs(s.ackOnce[s.unit!]),
  unspillable: pairs(s.unspillable[s.unit!]),
  spillFailed: s.spillFailed,
  pending: s.pendingSpill,
});

describe('authority (contract §4b): each kind of unauthorized event', () => {
  const kinds: Kind[] = [
    'unsigned',
    'forged',
    'wrongRole',
    'unknownKey',
    'expired',
    'expiredLast',
    'nonCanonical',
    'replayed',
  ];

  it.each(kinds)(
    '%s: changes no P, A or X, emits UNAUTHORIZED_EVENT naming the check, and the next request still refuses; signed correctly it heals as without a ring',
    (kind) => {
      fc.assert(
        fc.property(scenarioArb(fc.constant(kind)), (x0) => {
          const x = kind === 'replayed' ? { ...x0, target: 'ack' as const, oob: true } : x0;
          const bad = scenario(x);
          const good = scenario({ ...x, unauthorized: false });
          for (const s of [bad, good]) differential(s.events, { ...SMALL, ring: RING });

          const steps = run(bad.events, RING);
          const before = steps[bad.at - 1]!.state;
          const atEvent = steps[bad.at]!;
          const audits = atEvent.outputs.filter((o) => o.record === 'audit').map((o) => o.value);
          expect(audits.map((a) => a.code)).toContain('UNAUTHORIZED_EVENT');
          expect(audits.find((a) => a.code === 'UNAUTHORIZED_EVENT')!.message).toContain(
            FAILED[kind],
          );
          expect(healingSets(atEvent.state!)).toEqual(healingSets(before!));
          const next = verdicts(steps).at(-1)!;
          expect(next.decision).toBe('REFUSE');
          expect(next.action).toBe('SPILL');

          const healed = verdicts(run(good.events, RING)).at(-1)!;
          if (x.target === 'spillFailed')
            expect([healed.decision, healed.action]).toEqual(['REFUSE', 'HALT']);
          else expect(healed.decision).toBe('APPROVE');
        }),
        { numRuns: 15 },
      );
    },
  );

  it('out of band, an unauthorized event takes no place in the window of 8: the signed one with its eventId is then applied', () => {
    fc.assert(
      fc.property(
        scenarioArb(fc.constantFrom<Kind>('unsigned', 'forged', 'wrongRole', 'unknownKey')),
        (x0) => {
          const x = { ...x0, oob: true, target: 'ack' as const };
          const bad = scenario(x);
          const good = scenario({ ...x, unauthorized: false });
          // The unauthorized event, then its correctly signed twin under the same eventId.
          const events = [
            ...bad.events.slice(0, bad.at + 1),
            good.events[good.at]!,
            bad.events.at(-1)!,
          ];
          differential(events, { ...SMALL, ring: RING });
          expect(verdicts(run(events, RING)).at(-1)!.decision).toBe('APPROVE');
        },
      ),
      { numRuns: 20 },
    );
  });
});
