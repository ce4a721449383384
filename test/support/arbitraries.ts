/**
 * fast-check generators of event streams for the engine's property tests. Each generator draws
 * abstract commands and an interpreter turns them into a valid event stream, so shrinking works
 * on the commands and every stream is well-formed (contract §3) unless a command says otherwise.
 */
import fc from 'fast-check';
import type {
  AuthorityRole,
  ContextEvent,
  Coverage,
  EngineInput,
  MalformedRequest,
  Pin,
  SpillMode,
  TruncationReason,
  Unit,
} from '../../src/engine';
import { SessionBuilder } from './sessionBuilder';
import { UNITS, policyIn } from './engineHarness';
import {
  type AuthKind,
  type SignableEvent,
  UNAUTHORIZED_KINDS,
  authArb,
  authorize,
  rolesArb,
} from './signedEvents';
import { type TestRing, testRing } from './testRing';
import { TOP } from './referenceModel';

const unitArb = fc.constantFrom<Unit>(...UNITS);
const coverageArb = fc.constantFrom<Coverage>('STRICT', 'PINNED');
const spillArb = fc.constantFrom<SpillMode>('ENABLED', 'DISABLED');
const nat = fc.nat({ max: 1_000_000 });

/** Grace and idle periods small enough that generated time jumps cross them often. */
export const SMALL_GRACE_MS = 20_000;
export const SMALL_IDLE_MS = 50_000;

/** A turn's size: tokens and messages (TURNS is always 1). */
const turnArb = fc.record({
  tokens: fc.integer({ min: 1, max: 30 }),
  messages: fc.integer({ min: 1, max: 3 }),
  pinned: fc.boolean(),
});

/** A floor span of a sensible size in each unit. */
function spanFor(unit: Unit, k: number): number {
  return unit === 'TOKENS' ? k * 15 : k;
}

/** Heads in every unit, as a SessionBuilder appends turns. */
class Heads {
  turns = 0;
  tokens = 0;
  messages = 0;
  in(unit: Unit): number {
    return unit === 'TURNS' ? this.turns : unit === 'TOKENS' ? this.tokens : this.messages;
  }
  add(tokens: number, messages: number): void {
    this.turns += 1;
    this.tokens += tokens;
    this.messages += messages;
  }
}

// ---------------------------------------------------------------------------------------------
// (a) A well-behaved orchestrator: compaction before truncation, the summary input reaching the
// tail, tail ≥ floor and only moving forward, truncation only of verbatim positions the summary
// already covers. Under PINNED the summary input may start late, but never above a pin.

type WellBehavedCmd =
  | { k: 'turn'; tokens: number; messages: number; pinned: boolean }
  | { k: 'compact'; x: number; y: number; z: number; commit: boolean }
  | { k: 'truncate'; x: number; y: number; manual: boolean };

export interface WellBehavedSession {
  unit: Unit;
  coverage: Coverage;
  f: number;
  events: ContextEvent[];
  requests: number;
  truncations: number;
}

const wellBehavedCmd: fc.Arbitrary<WellBehavedCmd> = fc.oneof(
  { weight: 6, arbitrary: turnArb.map((t) => ({ k: 'turn' as const, ...t })) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('compact' as const),
      x: nat,
      y: nat,
      z: nat,
      commit: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('truncate' as const),
      x: nat,
      y: nat,
      manual: fc.boolean(),
    }),
  },
);

export function buildWellBehaved(
  unit: Unit,
  coverage: Coverage,
  f: number,
  spill: SpillMode,
  cmds: readonly WellBehavedCmd[],
): WellBehavedSession {
  const b = new SessionBuilder('well-behaved').open(policyIn(unit, f, { coverage, spill }));
  const heads = new Heads();
  let v = 0; // verbatim start
  let summaryEnd = 0; // [V, summaryEnd) is verbatim and covered by the summary
  let truncEnd: number | null = null; // highest truncated position + 1
  let lowestPin = Infinity;
  let requests = 0;
  let truncations = 0;
  for (const c of cmds) {
    if (c.k === 'turn') {
      const start = heads.in(unit);
      const pins: Pin[] = c.pinned ? ['CONSTRAINT'] : [];
      b.turn(c.tokens, 'ASSISTANT', pins, c.messages);
      heads.add(c.tokens, c.messages);
      if (c.pinned) lowestPin = Math.min(lowestPin, start);
    } else if (c.k === 'compact') {
      const h = heads.in(unit);
      const tMin = Math.max(v, truncEnd === null ? 0 : truncEnd + f);
      const tMax = Math.max(0, h - f);
      if (tMin > tMax) continue;
      const t = tMin + (c.x % (tMax - tMin + 1));
      const eIn = t + (c.y % (h - t + 1));
      const sMax = coverage === 'STRICT' ? 0 : Math.min(Math.max(0, t - f), lowestPin);
      const sIn = c.z % (sMax + 1);
      const id = `c${requests++}`;
      b.request(id, unit, sIn, eIn, t);
      if (c.commit) {
        b.commit(id, unit, sIn, eIn, t);
        v = Math.max(v, t);
        summaryEnd = eIn;
      }
    } else {
      if (summaryEnd <= v) continue;
      const a = v + (c.x % (summaryEnd - v));
      const e = a + 1 + (c.y % (summaryEnd - a));
      b.truncate(unit, a, e, c.manual ? 'MANUAL' : 'BUDGET_ENFORCEMENT');
      truncEnd = Math.max(truncEnd ?? 0, e);
      truncations++;
    }
  }
  return { unit, coverage, f, events: b.events, requests, truncations };
}

export const wellBehavedSession: fc.Arbitrary<WellBehavedSession> = fc
  .record({
    unit: unitArb,
    coverage: coverageArb,
    spill: spillArb,
    k: fc.integer({ min: 0, max: 4 }),
    cmds: fc.array(wellBehavedCmd, { minLength: 5, maxLength: 60, size: 'max' }),
  })
  .map(({ unit, coverage, spill, k, cmds }) =>
    buildWellBehaved(unit, coverage, spanFor(unit, k), spill, cmds),
  );

// ---------------------------------------------------------------------------------------------
// (b) Conformance streams: f > 0, requests with t − f ≥ 0, non-empty BUDGET_ENFORCEMENT/MANUAL
// truncations in the truncator's unit, commits, no spills or acknowledgements.

export interface SeedCheckInput {
  sIn: number;
  t: number;
  f: number;
  truncations: [number, number][];
  floorUnit: Unit;
  truncatorUnit: Unit;
}

/** The seed's `assert_compaction_safe`, ported: true when it raises (refuses). */
export function seedRefuses(x: SeedCheckInput): boolean {
  if (x.floorUnit !== x.truncatorUnit) return true;
  const floorStart = x.t - x.f;
  if (x.sIn > floorStart) return true;
  for (const [lo, hi] of x.truncations) if (hi > floorStart && lo < x.t) return true;
  return false;
}

export interface ConformanceSession {
  events: ContextEvent[];
  /** For each request event (by index in `events`): what the seed was asked. */
  checks: Map<number, SeedCheckInput>;
}

type ConformanceCmd =
  | { k: 'turn'; tokens: number; messages: number; pinned: boolean }
  | { k: 'truncate'; x: number; y: number; manual: boolean }
  | { k: 'request'; x: number; y: number; z: number; otherUnit: boolean }
  | { k: 'commit'; echo: boolean; x: number; y: number; z: number };

const conformanceCmd: fc.Arbitrary<ConformanceCmd> = fc.oneof(
  { weight: 6, arbitrary: turnArb.map((t) => ({ k: 'turn' as const, ...t })) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('truncate' as const),
      x: nat,
      y: nat,
      manual: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('request' as const),
      x: nat,
      y: nat,
      z: nat,
      otherUnit: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('commit' as const),
      echo: fc.boolean(),
      x: nat,
      y: nat,
      z: nat,
    }),
  },
);

function otherUnit(u: Unit, n: number): Unit {
  const others = UNITS.filter((x) => x !== u);
  return others[n % others.length]!;
}

export const conformanceSession: fc.Arbitrary<ConformanceSession> = fc
  .record({
    unit: unitArb,
    sameTruncator: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
    which: fc.nat(),
    coverage: coverageArb,
    spill: spillArb,
    k: fc.integer({ min: 1, max: 4 }),
    cmds: fc.array(conformanceCmd, { minLength: 5, maxLength: 50, size: 'max' }),
  })
  .map(({ unit, sameTruncator, which, coverage, spill, k, cmds }) => {
    const f = spanFor(unit, k);
    const truncatorUnit = sameTruncator ? unit : otherUnit(unit, which);
    const b = new SessionBuilder('conformance').open(
      policyIn(unit, f, { truncatorUnit, coverage, spill }),
    );
    const heads = new Heads();
    const truncations: [number, number][] = [];
    const checks = new Map<number, SeedCheckInput>();
    let last: { id: string; sIn: number; eIn: number; t: number } | null = null;
    let n = 0;
    for (const c of cmds) {
      if (c.k === 'turn') {
        b.turn(c.tokens, 'USER', c.pinned ? ['PLAN'] : [], c.messages);
        heads.add(c.tokens, c.messages);
      } else if (c.k === 'truncate') {
        const h = heads.in(truncatorUnit);
        const lo = c.x % (h + 2);
        const hi = lo + 1 + (c.y % (spanFor(truncatorUnit, 3) + 1));
        b.truncate(truncatorUnit, lo, hi, c.manual ? 'MANUAL' : 'BUDGET_ENFORCEMENT');
        truncations.push([lo, hi]);
      } else if (c.k === 'request') {
        const h = heads.in(unit);
        const t = f + (c.x % (h + 3));
        const sIn = c.y % (t + 3);
        const eIn = sIn + (c.z % (h + 3));
        const ru = c.otherUnit ? otherUnit(unit, c.x) : unit;
        const id = `q${n++}`;
        b.request(id, ru, sIn, eIn, t);
        checks.set(b.events.length - 1, {
          sIn,
          t,
          f,
          truncations: truncations.map((r) => [r[0], r[1]]),
          floorUnit: unit,
          truncatorUnit,
        });
        last = { id, sIn, eIn, t };
      } else if (c.echo && last) {
        b.commit(last.id, unit, last.sIn, last.eIn, last.t);
      } else {
        const h = heads.in(unit);
        const t = c.x % (h + 1);
        const sIn = c.y % (t + 1);
        b.commit(`k${n++}`, unit, sIn, sIn + (c.z % (h + 1)), t);
      }
    }
    return { events: b.events, checks };
  });

// ---------------------------------------------------------------------------------------------
// (c)–(g) Chaos: any mix of events, including gaps, conflicts, redeliveries, unknown sessions,
// discontinuous turns, ranges in other units and beyond the head, spills, failures,
// acknowledgements, closes past the grace period and malformed requests.

/**
 * How a SpillCompleted, SpillFailed or LossAcknowledged is sent: in band or out of band, signed
 * or not and how (contract §4b), with what validity, and whether its occurredAt lies far in the
 * future (an event time jump beyond any idle period).
 */
interface Sent {
  oob: boolean;
  auth: AuthKind;
  /** Picks among the ring's keys and among a kind's variants. */
  pick: number;
  validity: number;
  future: boolean;
  /** The range reaches 2^52 − 1 (an acknowledgement or spill of everything), out of band only. */
  whole: boolean;
}

type ChaosCmd =
  | {
      k: 'open';
      forged?: boolean;
      unit: Unit;
      mismatch: boolean;
      span: number;
      coverage: Coverage;
      spill: SpillMode;
      hot: boolean;
    }
  | { k: 'turn'; tokens: number; messages: number; pinned: boolean; jump: number }
  | { k: 'truncate'; other: boolean; x: number; y: number; reason: TruncationReason }
  | { k: 'request'; other: boolean; x: number; y: number; z: number; reuse: number }
  | { k: 'commit'; echo: boolean; x: number; y: number; z: number }
  | ({ k: 'spill'; echo: number; other: boolean; x: number; y: number } & Sent)
  | ({ k: 'spillFailed'; echo: number } & Sent)
  | ({ k: 'ack'; other: boolean; x: number; y: number } & Sent)
  | { k: 'close'; wait: boolean }
  | { k: 'wait' }
  | { k: 'jump'; ms: number }
  | { k: 'replay'; idx: number }
  | { k: 'reopen'; span: number; coverage: Coverage }
  | ({ k: 'healAll'; spill: boolean } & Sent)
  | { k: 'malformed'; nullTime: boolean }
  | { k: 'skip'; n: number }
  | { k: 'redeliver'; idx: number }
  | { k: 'conflict'; idx: number }
  | { k: 'oobRedeliver'; idx: number };

/** Mostly the latest request (the pending spill), sometimes an older one. */
const echoArb = fc.integer({ min: 0, max: 5 }).map((n) => Math.max(0, n - 2));

const rare = fc.integer({ min: 0, max: 5 }).map((n) => n === 0);

/** Out of band (seq null, contract §4 step 0) about one time in three. */
const outOfBandArb = fc.integer({ min: 0, max: 2 }).map((n) => n === 0);

const sentArb: fc.Arbitrary<Sent> = fc.record({
  oob: outOfBandArb,
  auth: authArb,
  pick: fc.nat({ max: 11 }),
  validity: fc.constantFrom(0, 1000, 30_000, 1_000_000_000_000),
  future: fc.integer({ min: 0, max: 30 }).map((n) => n === 0),
  whole: fc.integer({ min: 0, max: 12 }).map((n) => n === 0),
});

const openCmd = fc.record({
  k: fc.constant('open' as const),
  unit: unitArb,
  mismatch: rare,
  span: fc.integer({ min: 0, max: 4 }),
  coverage: coverageArb,
  spill: spillArb,
  hot: fc.boolean(),
});

const CHAOS_ARBS: { [K in ChaosCmd['k']]: fc.Arbitrary<Extract<ChaosCmd, { k: K }>> } = {
  open: openCmd,
  turn: fc.record({
    k: fc.constant('turn' as const),
    tokens: fc.integer({ min: 1, max: 20 }),
    messages: fc.integer({ min: 1, max: 3 }),
    pinned: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    jump: fc.integer({ min: 0, max: 30 }),
  }),
  truncate: fc.record({
    k: fc.constant('truncate' as const),
    other: rare,
    x: nat,
    y: nat,
    reason: fc.constantFrom<TruncationReason>('BUDGET_ENFORCEMENT', 'MANUAL', 'SUMMARY_EVICTED'),
  }),
  request: fc.record({
    k: fc.constant('request' as const),
    other: rare,
    x: nat,
    y: nat,
    z: nat,
    reuse: fc.integer({ min: 0, max: 3 }),
  }),
  commit: fc.record({
    k: fc.constant('commit' as const),
    echo: fc.boolean(),
    x: nat,
    y: nat,
    z: nat,
  }),
  spill: fc
    .tuple(
      fc.record({ k: fc.constant('spill' as const), echo: echoArb, other: rare, x: nat, y: nat }),
      sentArb,
    )
    .map(([c, sent]) => ({ ...c, ...sent })),
  spillFailed: fc
    .tuple(fc.record({ k: fc.constant('spillFailed' as const), echo: echoArb }), sentArb)
    .map(([c, sent]) => ({ ...c, ...sent })),
  ack: fc
    .tuple(fc.record({ k: fc.constant('ack' as const), other: rare, x: nat, y: nat }), sentArb)
    .map(([c, sent]) => ({ ...c, ...sent })),
  close: fc.record({ k: fc.constant('close' as const), wait: fc.boolean() }),
  wait: fc.constant({ k: 'wait' as const }),
  jump: fc.record({
    k: fc.constant('jump' as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 3 * SMALL_IDLE_MS }), fc.constant(SMALL_IDLE_MS)),
  }),
  replay: fc.record({ k: fc.constant('replay' as const), idx: nat }),
  reopen: fc.record({
    k: fc.constant('reopen' as const),
    span: fc.integer({ min: 0, max: 4 }),
    coverage: coverageArb,
  }),
  healAll: fc
    .tuple(fc.record({ k: fc.constant('healAll' as const), spill: fc.boolean() }), sentArb)
    .map(([c, sent]) => ({ ...c, ...sent, oob: true })),
  malformed: fc.record({ k: fc.constant('malformed' as const), nullTime: fc.boolean() }),
  skip: fc.record({ k: fc.constant('skip' as const), n: fc.integer({ min: 1, max: 3 }) }),
  redeliver: fc.record({ k: fc.constant('redeliver' as const), idx: nat }),
  conflict: fc.record({ k: fc.constant('conflict' as const), idx: nat }),
  oobRedeliver: fc.record({ k: fc.constant('oobRedeliver' as const), idx: nat }),
};

type Weights = { [K in ChaosCmd['k']]: number };

/** Everything, turns most often. */
const CHAOS_WEIGHTS: Weights = {
  open: 1,
  turn: 10,
  truncate: 3,
  request: 5,
  commit: 2,
  spill: 2,
  spillFailed: 1,
  ack: 1,
  close: 1,
  wait: 1,
  malformed: 1,
  skip: 1,
  redeliver: 1,
  conflict: 1,
  oobRedeliver: 1,
  jump: 0,
  replay: 0,
  reopen: 0,
  healAll: 0,
};

/** The ways out of a refusal: spills, failures, acknowledgements, commits; few gaps. */
const HEALING_WEIGHTS: Weights = {
  open: 0,
  turn: 8,
  truncate: 3,
  request: 6,
  commit: 3,
  spill: 4,
  spillFailed: 2,
  ack: 3,
  close: 0,
  wait: 0,
  malformed: 0,
  skip: 1,
  redeliver: 0,
  conflict: 0,
  oobRedeliver: 2,
  jump: 0,
  replay: 0,
  reopen: 0,
  healAll: 0,
};

/** Many requests reusing a few ids, redeliveries: the verdict store and the seq window. */
const MEMORY_WEIGHTS: Weights = {
  open: 0,
  turn: 4,
  truncate: 1,
  request: 8,
  commit: 2,
  spill: 1,
  spillFailed: 0,
  ack: 0,
  close: 0,
  wait: 0,
  malformed: 1,
  skip: 0,
  redeliver: 3,
  conflict: 1,
  oobRedeliver: 2,
  jump: 0,
  replay: 0,
  reopen: 0,
  healAll: 0,
};

/** Rev 11: everything, with time jumps, replays of signed events and contested policies. */
const REV11_WEIGHTS: Weights = {
  ...CHAOS_WEIGHTS,
  request: 6,
  spill: 3,
  ack: 3,
  wait: 0,
  jump: 2,
  replay: 2,
  reopen: 1,
  healAll: 1,
};

/** Unknown (or blind) sessions healing: spills and acknowledgements, turns that raise F. */
const UNKNOWN_REV11_WEIGHTS: Weights = {
  ...HEALING_WEIGHTS,
  truncate: 2,
  close: 1,
  jump: 1,
  replay: 1,
  healAll: 2,
};

function chaosCmdArb(w: Weights): fc.Arbitrary<ChaosCmd> {
  const kinds = Object.keys(w) as ChaosCmd['k'][];
  return fc.oneof(
    ...kinds
      .filter((k) => w[k] > 0)
      .map((k) => ({ weight: w[k], arbitrary: CHAOS_ARBS[k] as fc.Arbitrary<ChaosCmd> })),
  );
}

const TWO_HOURS = 2 * 60 * 60 * 1000;
const T0 = 1_767_225_600_000;
/** Far beyond any idle period the tests configure (about 11.6 days). */
const FUTURE_MS = 1_000_000_000;

/**
 * How `buildChaos` stamps and signs (contract rev 11); without it, events are unsigned and
 * stamped seq × 1 s.
 */
export interface ChaosContext {
  /** Signs SpillCompleted, SpillFailed and LossAcknowledged as each command says (§4b). */
  ring?: TestRing;
  /**
   * Event time of its own: every emitted event one second after the one before (out-of-band
   * ones too), `jump` adds to it. Without it, SessionBuilder's time (seq × 1 s) is kept.
   */
  clock?: boolean;
  /**
   * The stream of a producer without a key mixed into an honest one: honest signable events
   * are signed correctly with validity 0 (so any later copy is expired once the session moved
   * on), and every signable command whose `auth` is not `signed` (and every `replay`) is junk,
   * sent out of band: in band it would take a seq (§4b leaves in-band lies to Kafka ACLs) or,
   * at a seq already taken, reveal a gap, which raises H' and so what a later signed spill
   * stores (P is clipped to H'): a state no longer comparable with the stream without it.
   * A replayed in-band event is moved out of band (its signature then fails: seq is signed).
   */
  keyless?: boolean;
}

/** A built stream; `junk[i]` marks events a producer without a key sent (`keyless` only). */
export interface BuiltStream {
  events: EngineInput[];
  junk: boolean[];
}

export function buildChaos(
  sessionId: string,
  cmds: readonly ChaosCmd[],
  ctx: ChaosContext = {},
): EngineInput[] {
  return buildStream(sessionId, cmds, ctx).events;
}

export function buildStream(
  sessionId: string,
  cmds: readonly ChaosCmd[],
  ctx: ChaosContext = {},
): BuiltStream {
  const b = new SessionBuilder(sessionId);
  const out: EngineInput[] = [];
  const junk: boolean[] = [];
  /** Events of the honest producer, the ones commands may copy. */
  const honest: ContextEvent[] = [];
  const heads = new Heads();
  const requests: { id: string; seq: number; unit: Unit; sIn: number; eIn: number; t: number }[] =
    [];
  let unit: Unit = 'TURNS';
  let verbatim = 0; // an estimate of V, to aim most requests at valid tails
  let n = 0;
  let clock = T0;
  const lastAt = () => {
    const e = out[out.length - 1];
    return e?.occurredAt ?? T0;
  };
  /** Stamps the next emitted event with the context's clock (if any) or `occurredAt`. */
  const stamp = (occurredAt?: number) => {
    if (occurredAt !== undefined) b.next({ occurredAt });
    else if (ctx.clock) b.next({ occurredAt: (clock += 1000) });
  };
  const push = (e: EngineInput, isJunk = false) => {
    out.push(e);
    junk.push(isJunk);
    if (!isJunk && e.type !== 'MalformedRequest') honest.push(e);
  };
  const emitted = () => push(b.last);
  const pos = (x: number, u: Unit = unit) => x % (heads.in(u) + 5);
  /**
   * Sends the signable event `make` builds, as `c` says: in or out of band, signed or not,
   * back-dated or far in the future, as junk or honest.
   */
  const send = (c: Sent, make: () => void) => {
    const isJunk = ctx.keyless === true && c.auth !== 'signed';
    // Before any honest event the session has no lastEventAt to expire against: junk then
    // expires against its own occurredAt.
    const auth: AuthKind =
      isJunk && c.auth === 'expiredLast' && honest.length === 0 ? 'expired' : c.auth;
    let occurredAt: number | undefined;
    const lastHonestAt = honest[honest.length - 1]?.occurredAt ?? T0;
    // Junk is stamped no later than the honest producer's last event: see junkCmd.
    if (isJunk) occurredAt = lastHonestAt;
    if (c.future) occurredAt = lastAt() + FUTURE_MS;
    else if (auth === 'expiredLast') {
      // Back-dated below the last event; for junk, below the last honest one (junk sets no
      // lastEventAt), so its signature, valid at its own occurredAt, is surely expired.
      const last = isJunk ? lastHonestAt : lastAt();
      occurredAt = Math.max(0, last - 1 - (c.pick % 4) * 700);
    }
    stamp(occurredAt);
    if (c.oob || isJunk) b.outOfBand();
    make();
    const validity = ctx.keyless ? 0 : c.validity;
    const ring = ctx.ring;
    if (ring) b.mapLast((e) => authorize(e as SignableEvent, auth, ring, c.pick, validity));
    push(b.last, isJunk);
  };
  for (const c of cmds) {
    switch (c.k) {
      case 'open': {
        unit = c.unit;
        const policy = policyIn(c.unit, spanFor(c.unit, c.span), {
          truncatorUnit: c.mismatch ? otherUnit(c.unit, c.span) : c.unit,
          coverage: c.coverage,
          spill: c.spill,
          ...(c.hot ? { triggerTokens: 170_000 } : {}),
        });
        if (c.forged) {
          // Someone else's SessionOpened takes the seq first; the orchestrator's own one then
          // arrives in conflict, and the policy is contested (§4).
          const seq = b.nextSeq;
          stamp();
          b.next({ seq, eventId: `forged-open-${n++}` }).open({
            ...policy,
            floor: { unit: c.unit, span: 0 },
            coverage: 'PINNED',
          });
          emitted();
          stamp();
          b.next({ seq }).open(policy);
        } else {
          stamp();
          b.open(policy);
        }
        emitted();
        break;
      }
      case 'reopen': {
        // A SessionOpened resent under a new eventId at a seq already taken: a conflict.
        const first = honest.find((e) => e.type === 'SessionOpened');
        if (!first || first.type !== 'SessionOpened') break;
        const policy = {
          ...first.policy,
          floor: { ...first.policy.floor, span: spanFor(first.policy.floor.unit, c.span) },
          coverage: c.coverage,
        };
        stamp();
        b.next({ seq: first.seq ?? 0, eventId: `reopen-${n++}` }).open(policy);
        emitted();
        break;
      }
      case 'turn': {
        const pins: Pin[] = c.pinned ? ['COMMITMENT'] : [];
        stamp();
        if (c.jump === 1 || c.jump === 2) {
          // A discontinuity: positions skip ahead (1) or the turn index skips (2).
          const skip = c.jump === 1 ? 2 : 0;
          const turn = heads.turns + (c.jump === 2 ? 2 : 0);
          const tok: [number, number] = [heads.tokens + skip, heads.tokens + skip + c.tokens];
          const msg: [number, number] = [heads.messages + skip, heads.messages + skip + c.messages];
          b.turnAt(turn, tok, msg, pins);
          heads.turns = turn + 1;
          heads.tokens = tok[1];
          heads.messages = msg[1];
        } else {
          b.turn(c.tokens, 'TOOL_RESULT', pins, c.messages);
          heads.add(c.tokens, c.messages);
        }
        emitted();
        break;
      }
      case 'truncate': {
        const u = c.other ? otherUnit(unit, c.x) : unit;
        const lo = pos(c.x, u);
        stamp();
        b.truncate(u, lo, lo + (c.y % 6), c.reason);
        emitted();
        break;
      }
      case 'request': {
        const u = c.other ? otherUnit(unit, c.x) : unit;
        const h = heads.in(u);
        let t: number;
        let sIn: number;
        let eIn: number;
        if (c.z % 6 !== 0) {
          // Mostly within what is known: V ≤ t ≤ H, sIn ≤ t, eIn ≤ H.
          const lo = Math.min(verbatim, h);
          t = lo + (c.x % (h - lo + 1));
          sIn = c.y % (t + 1);
          eIn = sIn + (c.z % (h - sIn + 1));
        } else {
          // Anything: beyond the head, reversed, below V.
          t = pos(c.x, u);
          sIn = c.y % (t + 3);
          eIn = Math.max(0, sIn + (c.z % (h + 4)) - (c.x % 2 === 0 ? sIn + 1 : 0));
        }
        const old = requests[c.x % Math.max(1, requests.length)];
        stamp();
        if (c.reuse === 1 && old) {
          // The same request again: answered from the store unless the state changed.
          b.request(old.id, old.unit, old.sIn, old.eIn, old.t);
          requests.push({ ...old, seq: b.nextSeq - 1 });
          emitted();
          break;
        }
        const id = c.reuse === 0 && old ? old.id : `r${n++}`;
        b.request(id, u, sIn, eIn, t);
        requests.push({ id, seq: b.nextSeq - 1, unit: u, sIn, eIn, t });
        emitted();
        break;
      }
      case 'commit': {
        const last = requests[requests.length - 1];
        stamp();
        if (c.echo && last) {
          b.commit(last.id, last.unit, last.sIn, last.eIn, last.t);
          if (last.unit === unit) verbatim = Math.max(verbatim, Math.min(last.t, heads.in(unit)));
        } else {
          const t = pos(c.x);
          const sIn = c.y % (t + 1);
          b.commit(`k${n++}`, unit, sIn, sIn + (c.z % (heads.in(unit) + 2)), t);
        }
        emitted();
        break;
      }
      case 'spill': {
        const r = requests[requests.length - 1 - c.echo];
        const id = r ? `${sessionId}:${r.id}:${r.seq}` : 'none';
        const u = c.other ? otherUnit(unit, c.x) : unit;
        const lo = c.x % 3 === 0 ? 0 : pos(c.x, u);
        const len = c.y % 5 === 0 ? 0 : c.y % (heads.in(u) + 3);
        const end = c.whole && c.oob ? TOP : lo + len;
        send(c, () => b.spilled(id, u, lo, end));
        break;
      }
      case 'spillFailed': {
        const r = requests[requests.length - 1 - c.echo];
        send(c, () => b.spillFailed(r ? `${sessionId}:${r.id}:${r.seq}` : 'none'));
        break;
      }
      case 'ack': {
        const u = c.other ? otherUnit(unit, c.x) : unit;
        const lo = c.x % 3 === 0 ? 0 : pos(c.x, u);
        const len = c.y % 5 === 0 ? 0 : c.y % (heads.in(u) + 6);
        const end = c.whole && c.oob ? TOP : lo + len;
        send(c, () => b.acknowledge(u, lo, end));
        break;
      }
      case 'healAll':
        // Everything up to 2^52 − 1 spilled or acknowledged, out of band: the way out of a
        // blind state (or of an unknown one whose F is past every position the stream names).
        send(c, () =>
          c.spill ? b.spilled('heal-all', unit, 0, TOP) : b.acknowledge(unit, 0, TOP),
        );
        break;
      case 'close':
        stamp();
        b.close();
        emitted();
        if (c.wait) {
          b.advanceTime(TWO_HOURS);
          clock += TWO_HOURS;
          verbatim = 0;
        }
        break;
      case 'wait':
        b.advanceTime(TWO_HOURS);
        clock += TWO_HOURS;
        break;
      case 'jump':
        b.advanceTime(c.ms);
        clock += c.ms;
        break;
      case 'malformed': {
        const m: MalformedRequest = {
          type: 'MalformedRequest',
          sessionId,
          seq: b.nextSeq,
          requestId: `m${n++}`,
          eventId: `m${n}-event`,
          occurredAt: c.nullTime ? null : ctx.clock ? (clock += 1000) : T0 + b.nextSeq,
          error: 'summaryInput.end: negative',
        };
        b.skipSeq();
        push(m);
        break;
      }
      case 'skip':
        b.skipSeq(c.n);
        break;
      case 'redeliver': {
        const old = honest[c.idx % Math.max(1, honest.length)];
        if (old) push(old);
        break;
      }
      case 'conflict': {
        const old = honest[c.idx % Math.max(1, honest.length)];
        if (old) push({ ...old, eventId: `conflict-${n++}` } as ContextEvent);
        break;
      }
      case 'oobRedeliver': {
        // Any earlier out-of-band event again: inside the window of 8 a redelivery, beyond it
        // accepted afresh (contract §4 step 0).
        const oob = honest.filter((e) => e.seq === null);
        const old = oob[c.idx % Math.max(1, oob.length)];
        if (old) push(old);
        break;
      }
      case 'replay': {
        // A signed event copied off the topic and sent again, verbatim (§4b, replay).
        const signable = honest.filter(isSignableEvent);
        const old = signable[c.idx % Math.max(1, signable.length)];
        if (old && ctx.keyless) push({ ...old, seq: null }, true);
        else if (old) push(old);
        break;
      }
    }
  }
  return { events: out, junk };
}

function isSignableEvent(e: ContextEvent): e is SignableEvent {
  return e.type === 'SpillCompleted' || e.type === 'SpillFailed' || e.type === 'LossAcknowledged';
}

export const chaosStream: fc.Arbitrary<EngineInput[]> = fc
  .array(chaosCmdArb(CHAOS_WEIGHTS), { minLength: 1, maxLength: 70, size: 'max' })
  .map((cmds) => buildChaos('chaos', cmds))
  .filter((events) => events.length > 0);

/** Chaos that starts with a SessionOpened, so known-session rules run. */
export const openedChaosStream: fc.Arbitrary<EngineInput[]> = fc
  .tuple(
    openCmd,
    fc.array(chaosCmdArb(CHAOS_WEIGHTS), { minLength: 1, maxLength: 70, size: 'max' }),
  )
  .map(([open, cmds]) => buildChaos('chaos', [open, ...cmds]));

/** An opened session exercising spills, spill failures, acknowledgements and commits. */
export const healingStream: fc.Arbitrary<EngineInput[]> = fc
  .tuple(
    openCmd,
    fc.array(chaosCmdArb(HEALING_WEIGHTS), { minLength: 1, maxLength: 60, size: 'max' }),
  )
  .map(([open, cmds]) => buildChaos('chaos', [open, ...cmds]));

/** An unknown session exercising spills, failures and acknowledgements per unit. */
export const unknownHealingStream: fc.Arbitrary<EngineInput[]> = fc
  .array(chaosCmdArb(HEALING_WEIGHTS), { minLength: 1, maxLength: 40, size: 'max' })
  .map((cmds) => buildChaos('chaos', cmds))
  .filter((events) => events.length > 0);

/** A long opened session with many requests, reused requestIds and redeliveries. */
export const memoryStream: fc.Arbitrary<EngineInput[]> = fc
  .tuple(
    openCmd,
    fc.array(chaosCmdArb(MEMORY_WEIGHTS), { minLength: 30, maxLength: 140, size: 'max' }),
  )
  .map(([open, cmds]) => buildChaos('chaos', [open, ...cmds]));

// ---------------------------------------------------------------------------------------------
// (h) Rev 11: a trusted key ring, signed and unsigned events, time jumps past small grace and
// idle periods, contested policies, blind states, producers without a key.

/** A stream and the roles of the test ring its events were signed against (testRing(roles)). */
export interface SignedStream {
  roles: AuthorityRole[][];
  events: EngineInput[];
}

const openRev11Cmd = fc
  .tuple(
    openCmd,
    fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  )
  .map(([o, forged]) => ({ ...o, forged }));

/**
 * Any mix of events under rev 11: every kind of signature, time jumps, replays of signed events,
 * contested policies (a forged SessionOpened first, or one resent later), sometimes no
 * SessionOpened at all.
 */
export const rev11Stream: fc.Arbitrary<SignedStream> = fc
  .record({
    roles: rolesArb,
    open: fc.option(openRev11Cmd, { freq: 5 }),
    cmds: fc.array(chaosCmdArb(REV11_WEIGHTS), { minLength: 1, maxLength: 80, size: 'max' }),
  })
  .map(({ roles, open, cmds }) => ({
    roles,
    events: buildChaos('rev11', open ? [open, ...cmds] : cmds, {
      ring: testRing(roles),
      clock: true,
    }),
  }))
  .filter((s) => s.events.length > 0);

/**
 * An unknown session (the tests start it blind too) healing or not: spills and
 * acknowledgements of everything (up to 2^52 − 1), turns and truncations that raise F.
 */
export const unknownRev11Stream: fc.Arbitrary<SignedStream> = fc
  .record({
    roles: rolesArb,
    cmds: fc.array(chaosCmdArb(UNKNOWN_REV11_WEIGHTS), {
      minLength: 1,
      maxLength: 50,
      size: 'max',
    }),
  })
  .map(({ roles, cmds }) => ({
    roles,
    events: buildChaos('blind', cmds, { ring: testRing(roles), clock: true }),
  }))
  .filter((s) => s.events.length > 0);

/**
 * The honest producer's commands: its signed events are signed correctly, by a key with the
 * role, and in its own time order (never far ahead), so each is applied and sets lastEventAt.
 */
const honestCmd: fc.Arbitrary<ChaosCmd> = chaosCmdArb({
  ...REV11_WEIGHTS,
  replay: 0,
}).map((c) =>
  c.k === 'spill' || c.k === 'ack' || c.k === 'spillFailed' || c.k === 'healAll'
    ? { ...c, auth: 'signed', future: false }
    : c,
);

/**
 * A producer without a key of the right role: unauthorized signable events, replays. None of
 * them is stamped later than the honest producer's last event: the contract lets any event that
 * is not a dead letter trigger the grace and idle drops, an unauthorized one too, and a drop it
 * triggers (far in the future, or just before a redelivery once the session is idle) can
 * approve a request with tail 0 that the known session refused (UNIT_MISMATCH,
 * INVALID_REQUEST) or answer a redelivered request afresh; so the property holds only for junk
 * that triggers no drop (see docs/decisions.md).
 */
const junkCmd: fc.Arbitrary<ChaosCmd> = fc.oneof(
  ...(['spill', 'ack', 'spillFailed'] as const).map((k) =>
    (CHAOS_ARBS[k] as fc.Arbitrary<ChaosCmd>).chain((c) =>
      fc
        .constantFrom(...UNAUTHORIZED_KINDS)
        .map((auth) => ({ ...c, auth, future: false }) as ChaosCmd),
    ),
  ),
  CHAOS_ARBS.replay,
);

export interface KeylessStream extends SignedStream {
  junk: boolean[];
}

/**
 * An honest stream with a keyless producer's events mixed in (`junk` marks them). The ring
 * always holds a key with both roles, the honest producer's.
 */
export const keylessStream: fc.Arbitrary<KeylessStream> = fc
  .record({
    roles: rolesArb.map((r) => [...r, ['ACKNOWLEDGE', 'SPILL'] as AuthorityRole[]]),
    open: fc.option(openCmd, { freq: 6 }),
    cmds: fc.array(
      fc.oneof({ weight: 3, arbitrary: honestCmd }, { weight: 2, arbitrary: junkCmd }),
      {
        minLength: 1,
        maxLength: 80,
        size: 'max',
      },
    ),
  })
  .map(({ roles, open, cmds }) => ({
    roles,
    ...buildStream('keyless', open ? [open, ...cmds] : cmds, {
      ring: testRing(roles),
      clock: true,
      keyless: true,
    }),
  }))
  .filter((s) => s.events.length > 0);
