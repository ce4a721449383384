/**
 * An independent, deliberately naive reference model of contract §4 (state, step by step) and §5
 * (the decision) for one session, written from the contract text only (docs/contract.md): sets of positions are
 * boolean arrays over a small universe, nothing is shared with src/engine but the types. The
 * differential property test runs the engine and this model side by side.
 *
 * Where the contract leaves a choice open, the model takes the reading noted at that place.
 */
import type { ContextEvent, EngineInput, Policy, RuleCode, Unit } from '../../src/engine';

export type Bits = Uint8Array;

export class Universe {
  constructor(readonly n: number) {}
  empty(): Bits {
    return new Uint8Array(this.n);
  }
  range(s: number, e: number): Bits {
    const x = this.empty();
    for (let i = Math.max(0, s); i < Math.min(e, this.n); i++) x[i] = 1;
    return x;
  }
  or(a: Bits, b: Bits): Bits {
    return a.map((v, i) => v | b[i]!);
  }
  and(a: Bits, b: Bits): Bits {
    return a.map((v, i) => v & b[i]!);
  }
  minus(a: Bits, b: Bits): Bits {
    return a.map((v, i) => v & (1 - b[i]!));
  }
  isEmpty(a: Bits): boolean {
    return !a.some((v) => v === 1);
  }
  subset(a: Bits, b: Bits): boolean {
    return this.isEmpty(this.minus(a, b));
  }
  runs(a: Bits): [number, number][] {
    const out: [number, number][] = [];
    let i = 0;
    while (i < a.length) {
      if (!a[i]) {
        i++;
        continue;
      }
      const s = i;
      while (i < a.length && a[i]) i++;
      out.push([s, i]);
    }
    return out;
  }
}

/** Enough room for every position a stream names (ends, heads, tails), plus slack. */
export function universeFor(events: readonly EngineInput[]): Universe {
  let max = 0;
  for (const e of events) {
    const nums: number[] = [];
    if (e.type === 'TurnAppended') nums.push(e.turn + 1, e.tokens.end, e.messages.end);
    if ('range' in e) nums.push(e.range.end);
    if ('summaryInput' in e) nums.push(e.summaryInput.end, e.tailStart);
    max = Math.max(max, ...nums);
  }
  return new Universe(max + 2);
}

const RULES: RuleCode[] = [
  'UNKNOWN_SESSION',
  'EVENT_GAP',
  'UNIT_MISMATCH',
  'INVALID_REQUEST',
  'FLOOR_NOT_IN_INPUT',
  'TRUNCATION_IN_FLOOR',
  'SEAM_HOLE',
  'TAIL_BELOW_FLOOR',
  'EVICTED_PINNED',
  'EVICTED_UNCOVERED',
];

export interface ModelVerdict {
  requestId: string;
  decision: 'APPROVE' | 'REFUSE';
  basis: string | null;
  action: 'NONE' | 'SPILL' | 'HALT';
  reasons: { code: RuleCode; holes: [number, number][] }[];
  rulesChecked: RuleCode[];
  spillRequestId: string | null;
  inputSeq: number;
  requestedAt: number | null;
  decidedAt: number;
  holeUnit: Unit;
}

export interface ModelSpill {
  spillRequestId: string;
  unit: Unit;
  range: { start: number; end: number };
  holes: [number, number][];
}

export type ModelOutput =
  | {
      record: 'audit';
      kind: string;
      code: string;
      requestId: string | null;
      ranges: [number, number][] | null;
    }
  | { record: 'verdict'; value: ModelVerdict }
  | { record: 'spill-request'; value: ModelSpill };

interface Stored {
  requestId: string;
  unit: Unit;
  sIn: number;
  eIn: number;
  t: number;
  verdict: ModelVerdict;
  /** An accepted non-request event or a gap since it was decided. */
  stale: boolean;
}

interface Request {
  requestId: string;
  unit: Unit;
  sIn: number;
  eIn: number;
  t: number;
}

type PerUnit = Partial<Record<Unit, Bits>>;

export interface ModelState {
  policy: Policy | null;
  lastSeq: number;
  /** seq → eventId for the 32 highest accepted seqs. */
  ids: Map<number, string>;
  /** The eventIds of the last 8 out-of-band events accepted, oldest first. */
  oob: string[];
  Hg: number | null;
  head: Record<Unit, number>;
  last: { turn: number; tokens: [number, number]; messages: [number, number] } | null;
  V: number;
  pins: Bits;
  T: Bits;
  S: Bits;
  A0: Bits;
  P: PerUnit;
  A1: PerUnit;
  X: PerUnit;
  spillFailed: boolean;
  pending: { id: string; unit: Unit; start: number; end: number } | null;
  stored: Stored[];
  closedAt: number | null;
}

export class ReferenceSession {
  s: ModelState;

  constructor(
    readonly u: Universe,
    readonly graceMs = 60 * 60 * 1000,
  ) {
    this.s = this.fresh();
  }

  private fresh(): ModelState {
    const u = this.u;
    return {
      policy: null,
      lastSeq: -1,
      ids: new Map(),
      oob: [],
      Hg: null,
      head: { TURNS: 0, TOKENS: 0, MESSAGES: 0 },
      last: null,
      V: 0,
      pins: u.empty(),
      T: u.empty(),
      S: u.empty(),
      A0: u.empty(),
      P: {},
      A1: {},
      X: {},
      spillFailed: false,
      pending: null,
      stored: [],
      closedAt: null,
    };
  }

  private U(): Unit {
    return this.s.policy!.floor.unit;
  }

  /** H′ = max(H, Hg). */
  knownHead(): number {
    const h = this.s.head[this.U()];
    return this.s.Hg === null ? h : Math.max(h, this.s.Hg);
  }

  private get(sets: PerUnit, unit: Unit): Bits {
    return sets[unit] ?? this.u.empty();
  }

  /** Step 2: Hg := max(Hg, H, position); every gap makes stored verdicts stale. */
  private gap(position: number): void {
    for (const v of this.s.stored) v.stale = true;
    if (!this.s.policy) return;
    const h = Math.max(this.s.head[this.U()], position);
    this.s.Hg = this.s.Hg === null ? h : Math.max(this.s.Hg, h);
  }

  private named(e: EngineInput): number {
    const U = this.U();
    switch (e.type) {
      case 'TurnAppended':
        return U === 'TURNS' ? e.turn + 1 : U === 'TOKENS' ? e.tokens.end : e.messages.end;
      case 'Truncated':
      case 'SpillCompleted':
      case 'LossAcknowledged':
        return e.unit === U ? e.range.end : 0;
      case 'CompactionRequested':
      case 'CompactionCommitted':
        return e.unit === U ? Math.max(e.summaryInput.end, e.tailStart) : 0;
      default:
        return 0;
    }
  }

  step(e: EngineInput, decidedAt: number): ModelOutput[] {
    const out: ModelOutput[] = [];
    const rid = 'requestId' in e ? e.requestId : null;
    const audit = (kind: string, code: string, ranges: [number, number][] | null = null) =>
      out.push({ record: 'audit', kind, code, requestId: rid, ranges });
    const s0 = this.s;
    if (s0.closedAt !== null && e.occurredAt !== null && e.occurredAt - s0.closedAt > this.graceMs)
      this.s = this.fresh();
    const s = this.s;

    const malformed = e.type === 'MalformedRequest';
    const seq = e.seq;
    if (seq === null) {
      // Step 0: out of band. A redelivery is among the last 8 accepted out-of-band eventIds;
      // otherwise it joins them (FIFO), steps 1-2 are skipped, and it counts as accepted.
      const id = (e as ContextEvent).eventId;
      if (s.oob.includes(id)) return [];
      s.oob = [...s.oob, id].slice(-8);
      for (const v of s.stored) v.stale = true;
    } else {
      // Step 1.
      let conflict = false;
      let gap = false;
      if (s.lastSeq >= 0 && seq <= s.lastSeq) {
        if (!malformed && s.ids.get(seq) === (e as ContextEvent).eventId) return [];
        conflict = true;
      } else if (seq > s.lastSeq + 1) gap = true;
      if (conflict) audit('VIOLATION', 'SEQ_CONFLICT');
      if (conflict || gap) this.gap(s.policy ? this.named(e) : 0);
      if (!conflict && !malformed) {
        s.ids.set(seq, (e as ContextEvent).eventId);
        const keep = [...s.ids.keys()].sort((a, b) => b - a).slice(0, 32);
        for (const k of [...s.ids.keys()]) if (!keep.includes(k)) s.ids.delete(k);
      }
      s.lastSeq = Math.max(s.lastSeq, seq);
      const survives =
        e.type === 'CompactionRequested' ||
        malformed ||
        e.type === 'SpillCompleted' ||
        e.type === 'LossAcknowledged';
      if (conflict && !survives) return out;
      if (e.type !== 'CompactionRequested' && !malformed) for (const v of s.stored) v.stale = true;
    }

    // Step 3.
    const u = this.u;
    switch (e.type) {
      case 'SessionOpened': {
        if (s.policy) break;
        s.policy = e.policy;
        s.P = {};
        s.A1 = {};
        s.X = {};
        if (e.policy.triggerTokens >= e.policy.ceilingTokens)
          audit('ADVISORY', 'TRIGGER_NOT_BELOW_CEILING');
        if (e.policy.floor.unit !== e.policy.truncatorUnit) audit('ADVISORY', 'UNIT_MISMATCH');
        break;
      }
      case 'TurnAppended': {
        if (!s.policy) break;
        const U = this.U();
        const spanIn = (t: {
          turn: number;
          tokens: [number, number];
          messages: [number, number];
        }) => (U === 'TURNS' ? [t.turn, t.turn + 1] : U === 'TOKENS' ? t.tokens : t.messages);
        const cur = {
          turn: e.turn,
          tokens: [e.tokens.start, e.tokens.end] as [number, number],
          messages: [e.messages.start, e.messages.end] as [number, number],
        };
        const p = s.last;
        const continuous = p
          ? e.turn === p.turn + 1 &&
            cur.tokens[0] === p.tokens[1] &&
            cur.messages[0] === p.messages[1]
          : e.turn === 0 && cur.tokens[0] === 0 && cur.messages[0] === 0;
        const [start, end] = spanIn(cur) as [number, number];
        if (!continuous) {
          this.gap(end);
          const from = p ? spanIn(p)[1]! : 0;
          s.pins = u.or(s.pins, u.range(from, start));
        }
        s.head = {
          TURNS: Math.max(s.head.TURNS, e.turn + 1),
          TOKENS: Math.max(s.head.TOKENS, e.tokens.end),
          MESSAGES: Math.max(s.head.MESSAGES, e.messages.end),
        };
        if (e.pins.length > 0) s.pins = u.or(s.pins, u.range(start, end));
        s.last = cur;
        break;
      }
      case 'Truncated': {
        s.A1 = {};
        if (!s.policy) break;
        const U = this.U();
        if (e.unit !== U) {
          audit('VIOLATION', 'UNPLACEABLE_RANGE');
          this.gap(0);
          break;
        }
        if (e.range.end > this.knownHead()) this.gap(e.range.end);
        const r = u.range(e.range.start, e.range.end);
        const belowV = u.and(r, u.range(0, s.V));
        if (e.reason === 'SUMMARY_EVICTED') {
          s.S = u.minus(s.S, r);
          s.T = u.or(s.T, belowV);
        } else {
          s.T = u.or(s.T, r);
          s.S = u.minus(s.S, belowV);
        }
        const lost = u.minus(u.and(r, s.T), u.or(s.S, u.or(this.get(s.P, U), s.A0)));
        const pinned = u.and(lost, s.pins);
        if (!u.isEmpty(pinned)) audit('ADVISORY', 'PINNED_EVICTED', u.runs(pinned));
        else if (s.policy.coverage === 'STRICT' && !u.isEmpty(lost))
          audit('ADVISORY', 'CONTENT_EVICTED', u.runs(lost));
        break;
      }
      case 'CompactionRequested': {
        const req: Request = {
          requestId: e.requestId,
          unit: e.unit,
          sIn: e.summaryInput.start,
          eIn: e.summaryInput.end,
          t: e.tailStart,
        };
        const i = s.stored.findIndex((v) => v.requestId === e.requestId);
        const st = i >= 0 ? s.stored[i]! : null;
        const same =
          st !== null &&
          st.unit === req.unit &&
          st.sIn === req.sIn &&
          st.eIn === req.eIn &&
          st.t === req.t;
        if (st && same && !st.stale) {
          out.push({ record: 'verdict', value: st.verdict });
          s.stored.splice(i, 1);
          s.stored.push(st); // reading: "the last 16 requestIds" = most recently requested
          break;
        }
        if (st && !same) audit('VIOLATION', 'REQUEST_ID_REUSED');
        const { verdict, spill } = this.decide(req, e.seq, e.occurredAt, decidedAt, e.sessionId);
        out.push({ record: 'verdict', value: verdict });
        if (i >= 0) s.stored.splice(i, 1);
        s.stored.push({ ...req, verdict, stale: false });
        if (s.stored.length > 16) s.stored.shift();
        if (spill) {
          out.push({ record: 'spill-request', value: spill });
          s.pending = { id: spill.spillRequestId, unit: spill.unit, ...spill.range };
        }
        break;
      }
      case 'MalformedRequest':
        out.push({
          record: 'verdict',
          value: {
            requestId: e.requestId,
            decision: 'REFUSE',
            basis: null,
            action: 'HALT',
            reasons: [{ code: 'INVALID_REQUEST', holes: [] }],
            rulesChecked: ['INVALID_REQUEST'],
            spillRequestId: null,
            inputSeq: e.seq,
            requestedAt: e.occurredAt,
            decidedAt,
            holeUnit: 'TURNS',
          },
        });
        break;
      case 'CompactionCommitted': {
        const st = s.stored.find((v) => v.requestId === e.requestId);
        const req: Request = {
          requestId: e.requestId,
          unit: e.unit,
          sIn: e.summaryInput.start,
          eIn: e.summaryInput.end,
          t: e.tailStart,
        };
        const same =
          st !== undefined &&
          st.unit === req.unit &&
          st.sIn === req.sIn &&
          st.eIn === req.eIn &&
          st.t === req.t;
        if (!st || st.verdict.decision !== 'APPROVE' || !same)
          audit('VIOLATION', 'COMMITTED_WITHOUT_APPROVAL');
        else if (this.evaluate(req).fired.length > 0)
          audit('VIOLATION', 'APPROVAL_STALE_AT_COMMIT');
        s.A1 = {};
        if (!s.policy) break;
        const U = this.U();
        if (e.unit !== U) {
          audit('VIOLATION', 'UNPLACEABLE_RANGE');
          this.gap(0);
          break;
        }
        const hp = this.knownHead();
        const t = Math.min(e.tailStart, hp);
        const I = u.minus(u.and(u.range(req.sIn, req.eIn), u.range(0, hp)), u.minus(s.T, s.S));
        s.T = u.or(s.T, u.minus(u.range(0, Math.max(t, s.V)), I));
        s.S = I;
        s.V = Math.max(s.V, t);
        break;
      }
      case 'SpillCompleted': {
        const r = u.range(e.range.start, e.range.end);
        if (s.policy) {
          const U = this.U();
          if (e.unit !== U) {
            audit('VIOLATION', 'UNPLACEABLE_RANGE');
            break;
          }
          s.P[U] = u.or(this.get(s.P, U), u.and(r, u.range(0, this.knownHead())));
        } else s.P[e.unit] = u.or(this.get(s.P, e.unit), r);
        if (e.range.end > e.range.start) s.spillFailed = false;
        const p = s.pending;
        if (p && p.id === e.spillRequestId) {
          const asked = u.range(p.start, p.end);
          const missing = p.unit === e.unit ? u.minus(asked, r) : asked;
          if (!u.isEmpty(missing)) {
            s.X[p.unit] = u.or(this.get(s.X, p.unit), missing);
            audit('VIOLATION', 'SPILL_INCOMPLETE', u.runs(missing));
          }
          s.pending = null;
        }
        break;
      }
      case 'SpillFailed':
        if (s.pending && s.pending.id === e.spillRequestId) {
          s.spillFailed = true;
          s.pending = null;
        }
        break;
      case 'LossAcknowledged': {
        let r = u.range(e.range.start, e.range.end);
        let unit = e.unit;
        if (s.policy) {
          unit = this.U();
          if (e.unit !== unit) {
            audit('VIOLATION', 'UNPLACEABLE_RANGE');
            break;
          }
          r = u.and(r, u.range(0, this.knownHead()));
          s.A0 = u.or(s.A0, u.and(r, u.minus(s.T, u.or(s.S, this.get(s.P, unit)))));
          if (s.Hg !== null && u.subset(u.range(0, s.Hg), r)) {
            s.Hg = null;
            // In band only: an out-of-band acknowledgement leaves the sequence as it is.
            if (e.seq !== null) {
              s.lastSeq = e.seq;
              s.ids = new Map([[e.seq, e.eventId]]);
            }
          }
        }
        s.A1 = { [unit]: r };
        s.spillFailed = false;
        audit('ADVISORY', 'LOSS_ACKNOWLEDGED', u.runs(r));
        break;
      }
      case 'SessionClosed':
        s.closedAt = e.occurredAt;
        break;
    }
    return out;
  }

  /** §5: the rules, top-down, with their unhealed holes; `heal` is what heals (P ∪ A, or P). */
  evaluate(
    r: Request,
    withAck = true,
  ): {
    rulesChecked: RuleCode[];
    fired: { code: RuleCode; holes: Bits; need: Bits | null }[];
    unit: Unit;
  } {
    const u = this.u;
    const s = this.s;
    const rulesChecked: RuleCode[] = [];
    const fired: { code: RuleCode; holes: Bits; need: Bits | null }[] = [];
    const unit = s.policy ? this.U() : r.unit;
    const P = this.get(s.P, unit);
    const A = withAck ? u.or(s.policy ? s.A0 : u.empty(), this.get(s.A1, unit)) : u.empty();
    const heal = u.or(P, A);
    const head0t = u.range(0, r.t);
    const hole = (code: RuleCode, h: Bits) => {
      rulesChecked.push(code);
      const left = u.minus(h, heal);
      if (!u.isEmpty(left)) fired.push({ code, holes: left, need: null });
    };
    const holeless = (code: RuleCode, applies: boolean, healable: boolean) => {
      rulesChecked.push(code);
      if (!applies) return;
      const need = u.minus(head0t, heal);
      if (!healable || !u.isEmpty(need)) fired.push({ code, holes: u.empty(), need });
    };
    if (!s.policy) {
      holeless('UNKNOWN_SESSION', true, true);
      const valid = 0 <= r.sIn && r.sIn <= r.eIn && 0 <= r.t;
      holeless('INVALID_REQUEST', !valid, false);
      return { rulesChecked, fired, unit };
    }
    const U = unit;
    const hp = this.knownHead();
    const f = s.policy.floor.span;
    rulesChecked.push('UNKNOWN_SESSION');
    if (s.Hg !== null) hole('EVENT_GAP', u.range(0, s.Hg));
    else rulesChecked.push('EVENT_GAP');
    const ruOther = r.unit !== U;
    holeless('UNIT_MISMATCH', ruOther || s.policy.truncatorUnit !== U, !ruOther);
    if (ruOther) return { rulesChecked, fired, unit };
    const valid = 0 <= r.sIn && r.sIn <= r.eIn && r.eIn <= hp && s.V <= r.t && r.t <= hp;
    holeless('INVALID_REQUEST', !valid, false);
    if (!valid) return { rulesChecked, fired, unit };
    const I = u.minus(u.range(r.sIn, r.eIn), u.minus(s.T, s.S));
    const U0 = u.minus(u.or(head0t, u.and(s.T, u.range(r.t, hp))), I);
    hole('FLOOR_NOT_IN_INPUT', u.range(Math.max(0, r.t - f), Math.min(r.sIn, r.t)));
    hole('TRUNCATION_IN_FLOOR', u.and(s.T, u.range(Math.max(0, r.t - f), r.t)));
    hole('SEAM_HOLE', u.range(r.eIn, r.t));
    hole('TAIL_BELOW_FLOOR', u.and(u.range(Math.max(0, hp - f), hp), u.or(head0t, s.T)));
    hole('EVICTED_PINNED', u.and(U0, s.pins));
    if (s.policy.coverage === 'STRICT') hole('EVICTED_UNCOVERED', U0);
    return { rulesChecked, fired, unit };
  }

  decide(
    r: Request,
    seq: number,
    occurredAt: number,
    decidedAt: number,
    sessionId: string,
  ): { verdict: ModelVerdict; spill: ModelSpill | null } {
    const u = this.u;
    const s = this.s;
    const ev = this.evaluate(r);
    const refused = ev.fired.length > 0;
    let basis: string | null = null;
    let action: 'NONE' | 'SPILL' | 'HALT' = 'NONE';
    if (!refused) {
      const P = this.get(s.P, ev.unit);
      if (this.evaluate(r, false).fired.length > 0) basis = 'LOSS_ACKNOWLEDGED';
      else if (r.t > 0 && u.subset(u.range(0, r.t), P)) basis = 'LOSSLESS_SPILL';
      else basis = 'INVARIANT_HOLDS';
    } else {
      const enabled = s.policy ? s.policy.spill === 'ENABLED' : true;
      const X = this.get(s.X, ev.unit);
      const canSpill =
        enabled &&
        !s.spillFailed &&
        !ev.fired.some((f) => f.code === 'INVALID_REQUEST') &&
        (!s.policy || r.unit === this.U()) &&
        !ev.fired.some((f) => !u.isEmpty(u.and(f.need ?? f.holes, X)));
      action = canSpill ? 'SPILL' : 'HALT';
    }
    const id = action === 'SPILL' ? `${sessionId}:${r.requestId}:${seq}` : null;
    const verdict: ModelVerdict = {
      requestId: r.requestId,
      decision: refused ? 'REFUSE' : 'APPROVE',
      basis,
      action,
      reasons: ev.fired.map((f) => ({ code: f.code, holes: u.runs(f.holes) })),
      rulesChecked: ev.rulesChecked,
      spillRequestId: id,
      inputSeq: seq,
      requestedAt: occurredAt,
      decidedAt,
      holeUnit: ev.unit,
    };
    if (!id) return { verdict, spill: null };
    const holes = ev.fired.reduce((acc, f) => u.or(acc, f.holes), u.empty());
    const range = s.policy
      ? { start: 0, end: this.knownHead() }
      : { start: 0, end: Math.max(r.eIn, r.t) };
    return {
      verdict,
      spill: { spillRequestId: id, unit: ev.unit, range, holes: u.runs(holes) },
    };
  }
}

export { RULES };
