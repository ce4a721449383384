/**
 * Streams that fragment a session's range sets past 128 ranges (contract §4a), so coarsening
 * and its coarsened set K happen, and past 16 reported ranges (§6), so bounded lists happen:
 * many non-adjacent pinned turns (pins), a commit of everything (S), many one-position
 * truncations (T, and S cut apart), an acknowledgement of everything (A0), many one-position spills
 * (P, and K once the removals pile up), and rounds of refused requests whose spill leaves one
 * position out each time (X), with one wide truncation before the rounds (while P is still in
 * pieces, so its advisory names more than 16 lost ranges). Requests in between, some of them
 * spanning the whole session, see the fragmented state and name more than 16 holes; a single
 * truncation after the acknowledgement lets them see A0 without A1.
 *
 * The phases come in that order (each may be left out); each is generated with its length and a
 * salt, positions come from the salt, so a shrunk counterexample stays a valid stream.
 */
import fc from 'fast-check';
import type { AuthorityRole, ContextEvent, Coverage, EngineInput, Unit } from '../../src/engine';
import { UNITS, policyIn } from './engineHarness';
import { SessionBuilder } from './sessionBuilder';
import { authorize, rolesArb } from './signedEvents';
import { testRing } from './testRing';

export type Phase =
  | { k: 'pins'; n: number; salt: number }
  | { k: 'truncs'; n: number; salt: number }
  | { k: 'commitAll' }
  | { k: 'ackAll' }
  | { k: 'spills'; n: number; salt: number }
  | { k: 'xRounds'; n: number; salt: number }
  | { k: 'wideTrunc' }
  | { k: 'cut'; salt: number }
  | { k: 'request'; salt: number; wide: boolean };

export interface FragmentingPlan {
  roles: AuthorityRole[][];
  known: boolean;
  unit: Unit;
  coverage: Coverage;
  f: number;
  phases: Phase[];
}

/**
 * `n` distinct even positions below `2 × slots` (slots ≥ n), in an order the salt shuffles:
 * i ↦ 2 × ((i × step + salt) mod slots) with step coprime to slots.
 */
function distinctEven(n: number, slots: number, salt: number): number[] {
  let step = 7 + (salt % 5) * 2;
  while (gcd(step, slots) !== 1) step++;
  return Array.from({ length: n }, (_, i) => 2 * ((i * step + salt) % slots));
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
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
  let verbatim = 0; // V after the commit, so random requests aim at valid tails
  const emit = (send: () => void, oob = false) => {
    b.next({ occurredAt: (clock += 1000) });
    if (oob) b.outOfBand();
    send();
    const e = b.last;
    if (e.type === 'SpillCompleted' || e.type === 'SpillFailed' || e.type === 'LossAcknowledged')
      b.mapLast(() => authorize(e, 'signed', ring, n, 3_600_000));
    out.push(b.last);
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
        for (const at of distinctEven(p.n, Math.floor(head() / 2), p.salt)) {
          const reason = (['BUDGET_ENFORCEMENT', 'MANUAL', 'SUMMARY_EVICTED'] as const)[
            next() % 5 === 0 ? 2 : next() % 2
          ]!;
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
        verbatim = Math.max(verbatim, t);
        break;
      }
      case 'ackAll':
        emit(() => b.acknowledge(unit, 0, head()), true);
        break;
      case 'spills': {
        const next = lcg(p.salt);
        while (head() < 2 * p.n + 2) turn(false);
        for (const at of distinctEven(p.n, Math.floor(head() / 2), p.salt)) {
          const u = plan.known || next() % 5 > 0 ? unit : UNITS[next() % 3]!;
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
      case 'cut': {
        // One new loss: the acknowledgement's one-compaction acceptance A1 expires, so later
        // requests see what A0 (and P) alone heal.
        const at = lcg(p.salt)() % Math.max(1, head());
        emit(() => b.truncate(unit, at, at + 1));
        break;
      }
      case 'wideTrunc':
        emit(() => b.truncate(unit, 0, head()));
        break;
      case 'request': {
        const h = head();
        if (p.wide) {
          // Everything leaves the verbatim window: every truncated range is a hole.
          emit(() => b.request(`q${n++}`, unit, 0, h, h));
          break;
        }
        const next = lcg(p.salt);
        const lo = Math.min(verbatim, h);
        const t = lo + (next() % (h - lo + 1));
        const sIn = next() % (t + 1);
        emit(() => b.request(`q${n++}`, unit, sIn, sIn + (next() % (h - sIn + 1)), t));
        break;
      }
    }
  }
  return out;
}

const requestArb = fc.record({
  k: fc.constant('request' as const),
  salt: fc.nat(),
  wide: fc.boolean(),
});

/** Each phase, in the order that fragments every set, present about four times in five. */
const SKELETON: fc.Arbitrary<Phase | null>[] = [
  fc.record({
    k: fc.constant('pins' as const),
    n: fc.integer({ min: 120, max: 160 }),
    salt: fc.nat(),
  }),
  fc.constant({ k: 'commitAll' as const }),
  requestArb,
  fc.record({
    k: fc.constant('truncs' as const),
    n: fc.integer({ min: 120, max: 170 }),
    salt: fc.nat(),
  }),
  requestArb,
  fc.constant({ k: 'ackAll' as const }),
  requestArb,
  fc.record({ k: fc.constant('cut' as const), salt: fc.nat() }),
  requestArb,
  requestArb,
  fc.record({
    k: fc.constant('spills' as const),
    n: fc.integer({ min: 260, max: 400 }),
    salt: fc.nat(),
  }),
  requestArb,
  fc.constant({ k: 'wideTrunc' as const }),
  requestArb,
  fc.record({
    k: fc.constant('xRounds' as const),
    n: fc.integer({ min: 120, max: 160 }),
    salt: fc.nat(),
  }),
  requestArb,
].map((phase) => fc.option(phase as fc.Arbitrary<Phase>, { freq: 5, nil: null }));

/**
 * A plan over the skeleton. The ring always holds a key with both roles (every signed spill and
 * acknowledgement here is meant to be applied).
 */
export const fragmentingPlan: fc.Arbitrary<FragmentingPlan> = fc
  .record({
    roles: rolesArb,
    known: fc.integer({ min: 0, max: 3 }).map((x) => x > 0),
    unit: fc.constantFrom<Unit>(...UNITS),
    coverage: fc.constantFrom<Coverage>('STRICT', 'PINNED'),
    f: fc.integer({ min: 0, max: 2 }),
    phases: fc.tuple(...SKELETON).map((ps) => ps.filter((p): p is Phase => p !== null)),
  })
  .map((p) => ({ ...p, roles: [...p.roles, ['ACKNOWLEDGE', 'SPILL'] as AuthorityRole[]] }));
