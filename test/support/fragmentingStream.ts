/**
 * Streams that fragment a session's range sets past 128 ranges (contract §4a), so coarsening
 * and its coarsened set K happen, and past 16 reported ranges (§6), so bounded lists happen:
 * many non-adjacent pinned turns (pins), many one-position truncations (T), a commit of
 * everything that is left (S), an acknowledgement of everything (A0), many one-position spills
 * (P, and K once the removals pile up), and rounds of refused requests whose spill leaves one
 * position out each time (X). Requests in between see the fragmented state.
 *
 * Each phase is generated with its length and a salt; positions come from the salt, so a
 * shrunk counterexample stays a valid stream.
 */
import fc from 'fast-check';
import type { AuthorityRole, ContextEvent, Coverage, EngineInput, Unit } from '../../src/engine';
import { UNITS, policyIn } from './engineHarness';
import { SessionBuilder } from './sessionBuilder';
import { type SignableEvent, authorize, rolesArb } from './signedEvents';
import { testRing } from './testRing';

export type Phase =
  | { k: 'pins'; n: number; salt: number }
  | { k: 'truncs'; n: number; salt: number }
  | { k: 'commitAll' }
  | { k: 'ackAll' }
  | { k: 'spills'; n: number; salt: number }
  | { k: 'xRounds'; n: number; salt: number }
  | { k: 'request'; salt: number };

export interface FragmentingPlan {
  roles: AuthorityRole[][];
  known: boolean;
  unit: Unit;
  coverage: Coverage;
  f: number;
  phases: Phase[];
}

/** A small deterministic generator of positions from a salt. */
function lcg(salt: number): () => number {
  let x = (salt * 2654435761 + 1) >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x;
  };
}

export function buildFragmenting(plan: FragmentingPlan): EngineInput[] {
  const ring = testRing(plan.roles);
  const b = new SessionBuilder('frag');
  const out: ContextEvent[] = [];
  const unit = plan.unit;
  let clock = 1_767_225_600_000;
  let n = 0;
  const emit = (send: () => void, oob = false) => {
    b.next({ occurredAt: (clock += 1000) });
    if (oob) b.outOfBand();
    send();
    let e = b.events.pop()!;
    if (e.type === 'SpillCompleted' || e.type === 'SpillFailed' || e.type === 'LossAcknowledged')
      e = authorize(e as SignableEvent, 'signed', ring, n, 3_600_000);
    b.events.push(e);
    out.push(e);
  };
  const head = () => {
    const h = b.heads;
    return unit === 'TURNS' ? h.turns : unit === 'TOKENS' ? h.tokens : h.messages;
  };
  /** Turns of 2 tokens and 2 messages (in TURNS, every other turn is what keeps ranges apart). */
  const turn = (pinned: boolean) =>
    emit(() => b.turn(2, 'ASSISTANT', pinned ? ['CONSTRAINT'] : [], 2));
  if (plan.known)
    emit(() => b.open(policyIn(unit, plan.f, { coverage: plan.coverage, spill: 'ENABLED' })));
  for (const p of plan.phases) {
    switch (p.k) {
      case 'pins':
        // Every other turn pinned: one pin range each.
        for (let i = 0; i < p.n; i++) {
          turn(false);
          turn(true);
        }
        break;
      case 'truncs': {
        const next = lcg(p.salt);
        while (head() < 2 * p.n + 2) turn(false);
        const h = head();
        for (let i = 0; i < p.n; i++) {
          const at = 2 * (next() % Math.floor(h / 2)) + (unit === 'TURNS' ? 0 : next() % 2);
          const reason = (['BUDGET_ENFORCEMENT', 'MANUAL', 'SUMMARY_EVICTED'] as const)[next() % 3]!;
          emit(() => b.truncate(unit, at, at + 1, reason));
        }
        break;
      }
      case 'commitAll': {
        const h = head();
        const t = Math.max(0, h - 2);
        const id = `commit-${n++}`;
        emit(() => b.request(id, unit, 0, h, t));
        emit(() => b.commit(id, unit, 0, h, t));
        break;
      }
      case 'ackAll':
        emit(() => b.acknowledge(unit, 0, head()), true);
        break;
      case 'spills': {
        const next = lcg(p.salt);
        while (head() < 2 * p.n + 2) turn(false);
        const h = head();
        for (let i = 0; i < p.n; i++) {
          const at = 2 * (next() % Math.floor(h / 2));
          const u = plan.known ? unit : UNITS[next() % 3]!;
          emit(() => b.spilled(`frag-${n++}`, u, at, at + 1), true);
        }
        break;
      }
      case 'xRounds': {
        // Each round: new turns, a request refused with SPILL, and a spill that stores all of
        // the requested range but its last position (that one joins X); an unknown session
        // also gets that position spilled under another id, or its next refusal would HALT.
        const next = lcg(p.salt);
        for (let i = 0; i < p.n; i++) {
          // Two new positions per round, so the positions left out are never adjacent.
          turn(next() % 5 === 0);
          if (unit === 'TURNS') turn(false);
          const h = head();
          const id = `x${n++}`;
          emit(() => b.request(id, unit, 0, Math.max(0, h - 1), h));
          const spillId = `frag:${id}:${b.nextSeq - 1}`;
          emit(() => b.spilled(spillId, unit, 0, h - 1), true);
          if (!plan.known) emit(() => b.spilled(`cover-${n++}`, unit, h - 1, h), true);
        }
        break;
      }
      case 'request': {
        const next = lcg(p.salt);
        const h = head();
        const t = next() % (h + 1);
        const sIn = next() % (t + 1);
        emit(() => b.request(`q${n++}`, unit, sIn, sIn + (next() % (h - sIn + 1)), t));
        break;
      }
    }
  }
  return out;
}

const phaseArb: fc.Arbitrary<Phase> = fc.oneof(
  fc.record({ k: fc.constant('pins' as const), n: fc.integer({ min: 100, max: 150 }), salt: fc.nat() }),
  fc.record({ k: fc.constant('truncs' as const), n: fc.integer({ min: 100, max: 170 }), salt: fc.nat() }),
  fc.constant({ k: 'commitAll' as const }),
  fc.constant({ k: 'ackAll' as const }),
  fc.record({ k: fc.constant('spills' as const), n: fc.integer({ min: 100, max: 300 }), salt: fc.nat() }),
  fc.record({ k: fc.constant('xRounds' as const), n: fc.integer({ min: 100, max: 150 }), salt: fc.nat() }),
  fc.record({ k: fc.constant('request' as const), salt: fc.nat() }),
);

/**
 * A plan of 3–8 phases with requests between them. Roles always include both (every signed
 * spill and acknowledgement here is meant to be applied).
 */
export const fragmentingPlan: fc.Arbitrary<FragmentingPlan> = fc
  .record({
    roles: rolesArb,
    known: fc.integer({ min: 0, max: 3 }).map((x) => x > 0),
    unit: fc.constantFrom<Unit>(...UNITS),
    coverage: fc.constantFrom<Coverage>('STRICT', 'PINNED'),
    f: fc.integer({ min: 0, max: 2 }),
    phases: fc.array(phaseArb, { minLength: 3, maxLength: 8 }),
  })
  .map((p) => ({ ...p, roles: [...p.roles, ['ACKNOWLEDGE', 'SPILL'] as AuthorityRole[]] }));
