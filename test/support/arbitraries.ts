/**
 * fast-check generators of event streams for the engine's property tests. Each generator draws
 * abstract commands and an interpreter turns them into a valid event stream, so shrinking works
 * on the commands and every stream is well-formed (contract §3) unless a command says otherwise.
 */
import fc from 'fast-check';
import type {
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

const unitArb = fc.constantFrom<Unit>(...UNITS);
const coverageArb = fc.constantFrom<Coverage>('STRICT', 'PINNED');
const spillArb = fc.constantFrom<SpillMode>('ENABLED', 'DISABLED');
const nat = fc.nat({ max: 1_000_000 });

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

type ChaosCmd =
  | {
      k: 'open';
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
  | { k: 'spill'; echo: number; other: boolean; x: number; y: number; oob: boolean }
  | { k: 'spillFailed'; echo: number; oob: boolean }
  | { k: 'ack'; other: boolean; x: number; y: number; oob: boolean }
  | { k: 'close'; wait: boolean }
  | { k: 'wait' }
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
  spill: fc.record({
    k: fc.constant('spill' as const),
    echo: echoArb,
    other: rare,
    x: nat,
    y: nat,
    oob: outOfBandArb,
  }),
  spillFailed: fc.record({
    k: fc.constant('spillFailed' as const),
    echo: echoArb,
    oob: outOfBandArb,
  }),
  ack: fc.record({
    k: fc.constant('ack' as const),
    other: rare,
    x: nat,
    y: nat,
    oob: outOfBandArb,
  }),
  close: fc.record({ k: fc.constant('close' as const), wait: fc.boolean() }),
  wait: fc.constant({ k: 'wait' as const }),
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

export function buildChaos(sessionId: string, cmds: readonly ChaosCmd[]): EngineInput[] {
  const b = new SessionBuilder(sessionId);
  const out: EngineInput[] = [];
  const heads = new Heads();
  const requests: { id: string; seq: number; unit: Unit; sIn: number; eIn: number; t: number }[] =
    [];
  let unit: Unit = 'TURNS';
  let verbatim = 0; // an estimate of V, to aim most requests at valid tails
  let n = 0;
  const emitted = () => out.push(b.last);
  const pos = (x: number, u: Unit = unit) => x % (heads.in(u) + 5);
  for (const c of cmds) {
    switch (c.k) {
      case 'open':
        unit = c.unit;
        b.open(
          policyIn(c.unit, spanFor(c.unit, c.span), {
            truncatorUnit: c.mismatch ? otherUnit(c.unit, c.span) : c.unit,
            coverage: c.coverage,
            spill: c.spill,
            ...(c.hot ? { triggerTokens: 170_000 } : {}),
          }),
        );
        emitted();
        break;
      case 'turn': {
        const pins: Pin[] = c.pinned ? ['COMMITMENT'] : [];
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
        if (c.oob) b.outOfBand();
        b.spilled(id, u, lo, lo + len);
        emitted();
        break;
      }
      case 'spillFailed': {
        const r = requests[requests.length - 1 - c.echo];
        if (c.oob) b.outOfBand();
        b.spillFailed(r ? `${sessionId}:${r.id}:${r.seq}` : 'none');
        emitted();
        break;
      }
      case 'ack': {
        const u = c.other ? otherUnit(unit, c.x) : unit;
        const lo = c.x % 3 === 0 ? 0 : pos(c.x, u);
        const len = c.y % 5 === 0 ? 0 : c.y % (heads.in(u) + 6);
        if (c.oob) b.outOfBand();
        b.acknowledge(u, lo, lo + len);
        emitted();
        break;
      }
      case 'close':
        b.close();
        emitted();
        if (c.wait) {
          b.advanceTime(TWO_HOURS);
          verbatim = 0;
        }
        break;
      case 'wait':
        b.advanceTime(TWO_HOURS);
        break;
      case 'malformed': {
        const m: MalformedRequest = {
          type: 'MalformedRequest',
          sessionId,
          seq: b.nextSeq,
          requestId: `m${n++}`,
          occurredAt: c.nullTime ? null : 1_767_225_600_000 + b.nextSeq,
          error: 'summaryInput.end: negative',
        };
        b.skipSeq();
        out.push(m);
        break;
      }
      case 'skip':
        b.skipSeq(c.n);
        break;
      case 'redeliver': {
        const old = b.events[c.idx % Math.max(1, b.events.length)];
        if (old) out.push(old);
        break;
      }
      case 'conflict': {
        const old = b.events[c.idx % Math.max(1, b.events.length)];
        if (old) out.push({ ...old, eventId: `conflict-${n++}` } as ContextEvent);
        break;
      }
      case 'oobRedeliver': {
        // Any earlier out-of-band event again: inside the window of 8 a redelivery, beyond it
        // accepted afresh (contract §4 step 0).
        const oob = b.events.filter((e) => e.seq === null);
        const old = oob[c.idx % Math.max(1, oob.length)];
        if (old) out.push(old);
        break;
      }
    }
  }
  return out;
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
