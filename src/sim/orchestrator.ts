/**
 * A model of one agent orchestrator's session: it appends turns, watches its context
 * occupancy, and compacts (and truncates) the way a real orchestrator would, emitting the
 * session's events of contract §3 with `seq`, `eventId` and `occurredAt` well-formed.
 *
 * It never sees the engine's verdicts (so a whole fleet can be generated ahead of time);
 * instead each profile follows a script whose verdicts are known:
 *
 * - `well-behaved`: compacts at its trigger (below its truncation ceiling), summary input from
 *   0 reaching at least the tail, tail start at or above V and leaving the floor verbatim, and
 *   truncates only verbatim positions ≥ V that the summary already covers, never where a later
 *   floor window `[t−f, t)` will look. The engine never refuses it.
 * - `faulty`: trigger = ceiling, and budget enforcement truncates the oldest verbatim turns
 *   before it compacts (the seed's incident). Its requests are refused whenever that
 *   truncation lost content no spill covers. Without `spillAck` it commits anyway (it has no
 *   guard: the engine reports COMMITTED_WITHOUT_APPROVAL). With `spillAck`, after a request
 *   it predicts refused it spills `[0, H)` in U echoing the spill request's id
 *   `<sessionId>:<requestId>:<inputSeq>` (contract §6), or, with spills disabled, has an
 *   operator acknowledge `[0, H)`; then retries the same requestId (approved) and commits.
 */
import type {
  CompactionCommitted,
  CompactionRequested,
  ContextEvent,
  Pin,
  Policy,
  Role,
  Unit,
} from '../engine/events';
import { Rng } from './prng';

export type Profile = 'well-behaved' | 'faulty';

export interface SessionPlan {
  sessionId: string;
  profile: Profile;
  /** Faulty sessions only: spill (or acknowledge) and retry after a request predicted refused. */
  spillAck: boolean;
  policy: Policy;
  /** The seq of the session's SessionClosed (its last event), or null: it never closes. */
  closeAtSeq: number | null;
  /** Relative rate of the session's events in a fleet (1, 2 or 4). */
  activity: number;
  /** The seed of the session's own PRNG stream. */
  seed: number;
}

/** What a session has emitted so far, by kind (follow-ups it has queued included). */
export interface ModelCounts {
  turns: number;
  truncations: number;
  requests: number;
  /** Requests repeated after a spill or an acknowledgement (same requestId and ranges). */
  retries: number;
  commits: number;
  spills: number;
  acknowledgements: number;
}

const UNITS_BY_WEIGHT = { TURNS: 80, TOKENS: 10, MESSAGES: 10 } as const;
/** Context windows (tokens) and how often sessions use them. */
const WINDOWS = { '32000': 30, '64000': 40, '128000': 25, '200000': 5 } as const;

/** A random policy for a profile (floor and truncator in the same unit). */
export function randomPolicy(rng: Rng, profile: Profile): Policy {
  const windowTokens = Number(rng.weighted(WINDOWS));
  const triggerTokens = Math.round(windowTokens * (0.75 + 0.1 * rng.next()));
  const ceilingTokens =
    profile === 'faulty' ? triggerTokens : Math.min(windowTokens, Math.round(triggerTokens * 1.1));
  const unit: Unit = rng.weighted(UNITS_BY_WEIGHT);
  const span =
    unit === 'TURNS'
      ? rng.between(6, 16)
      : unit === 'MESSAGES'
        ? rng.between(8, 24)
        : Math.round(triggerTokens * (0.1 + 0.15 * rng.next()));
  return {
    windowTokens,
    triggerTokens,
    ceilingTokens,
    floor: { unit, span },
    truncatorUnit: unit,
    coverage: rng.chance(0.8) ? 'STRICT' : 'PINNED',
    spill: rng.chance(0.9) ? 'ENABLED' : 'DISABLED',
  };
}

/** Options for `planSession`. */
export interface PlanOptions {
  sessionId: string;
  seed: number;
  /** Probability that the session is faulty. */
  faultyShare: number;
  spillAck: boolean;
  /** Probability that the session closes (after 30 to 600 events). */
  closeShare: number;
  /** Force a profile instead of drawing one. */
  profile?: Profile;
}

export function planSession(o: PlanOptions): SessionPlan {
  const rng = new Rng(o.seed);
  const drawnFaulty = rng.chance(o.faultyShare);
  const profile = o.profile ?? (drawnFaulty ? 'faulty' : 'well-behaved');
  const closeAtSeq = rng.chance(o.closeShare) ? rng.between(30, 600) : null;
  const activity = rng.pick([1, 1, 1, 1, 1, 1, 2, 2, 2, 4]);
  return {
    sessionId: o.sessionId,
    profile,
    spillAck: profile === 'faulty' && o.spillAck,
    policy: randomPolicy(rng, profile),
    closeAtSeq,
    activity,
    seed: rng.nextUint32(),
  };
}

type Pending = (seq: number, at: number) => ContextEvent;

/** Turn boundaries are trimmed below the verbatim start once this many are dead. */
const TRIM_AFTER = 4096;

export class OrchestratorModel {
  readonly counts: ModelCounts = {
    turns: 0,
    truncations: 0,
    requests: 0,
    retries: 0,
    commits: 0,
    spills: 0,
    acknowledgements: 0,
  };
  private readonly rng: Rng;
  private readonly unit: Unit;
  private readonly span: number;
  /** Hot fields of the plan, kept on the model (one object to touch per event). */
  private readonly id: string;
  private readonly trigger: number;
  private readonly closeAtSeq: number;
  private readonly faulty: boolean;
  private seq = 0;
  private closed = false;
  private readonly queue: Pending[] = [];

  /** Start of turn `base + i` in TOKENS / MESSAGES; the last element is the head. */
  private tok: number[] = [0];
  private msg: number[] = [0];
  private base = 0;
  /** Turns appended (H in TURNS). */
  private turns = 0;
  private lastRole: Role = 'SYSTEM';

  /** V as a turn index (tails always fall on turn boundaries). */
  private verbatimTurn = 0;
  /** The first turn still verbatim in the context (≥ verbatimTurn). */
  private contextTurn = 0;
  /** The end (in U) of the highest truncation so far. */
  private maxTruncEnd = 0;
  /** P = [0, spilledEnd) in U. */
  private spilledEnd = 0;
  /** A truncation lost content no spill covers since the last spill or acknowledgement. */
  private lossy = false;
  /** Faulty: budget enforcement already ran in this compaction cycle. */
  private truncatedThisCycle = false;
  private summaryTokens = 0;
  private requestNo = 0;

  constructor(readonly plan: SessionPlan) {
    this.rng = new Rng(plan.seed);
    this.unit = plan.policy.floor.unit;
    this.span = plan.policy.floor.span;
    this.id = plan.sessionId;
    this.trigger = plan.policy.triggerTokens;
    this.closeAtSeq = plan.closeAtSeq ?? Infinity;
    this.faulty = plan.profile === 'faulty';
  }

  get sessionId(): string {
    return this.id;
  }

  /** True once the session emitted its SessionClosed. */
  get done(): boolean {
    return this.closed;
  }

  /** The seq the next event will carry. */
  get nextSeq(): number {
    return this.seq;
  }

  /** The session's next event, stamped `occurredAt`; null once the session is closed. */
  next(occurredAt: number): ContextEvent | null {
    if (this.closed) return null;
    const seq = this.seq;
    const e = this.step(seq, occurredAt);
    this.seq = seq + 1;
    return e;
  }

  private step(seq: number, at: number): ContextEvent {
    const pending = this.queue.shift();
    if (pending) return pending(seq, at);
    if (seq === 0) {
      return {
        type: 'SessionOpened',
        sessionId: this.id,
        seq,
        eventId: this.eventId(seq),
        occurredAt: at,
        policy: this.plan.policy,
      };
    }
    if (seq >= this.closeAtSeq) {
      this.closed = true;
      return {
        type: 'SessionClosed',
        sessionId: this.id,
        seq,
        eventId: this.eventId(seq),
        occurredAt: at,
      };
    }
    if (this.occupancy() >= this.trigger) {
      const e = this.faulty ? this.faultyCompaction(seq, at) : this.compaction(seq, at);
      if (e) return e;
    }
    return this.appendTurn(seq, at);
  }

  private eventId(seq: number): string {
    return `${this.id}-${seq}`;
  }

  // ---- positions ----------------------------------------------------------------------

  /** The start of turn `k` in U (k = turns: the head). */
  private pos(k: number): number {
    if (this.unit === 'TURNS') return k;
    return (this.unit === 'TOKENS' ? this.tok : this.msg)[k - this.base]!;
  }

  private tokensAt(k: number): number {
    return this.tok[k - this.base]!;
  }

  /** H in U. */
  private head(): number {
    return this.pos(this.turns);
  }

  /** The largest turn boundary k in [lo, turns] with pos(k) ≤ x, or lo − 1. */
  private lastAtMost(lo: number, x: number): number {
    let a = lo;
    let b = this.turns;
    if (this.pos(a) > x) return lo - 1;
    while (a < b) {
      const m = (a + b + 1) >>> 1;
      if (this.pos(m) <= x) a = m;
      else b = m - 1;
    }
    return a;
  }

  /** The smallest turn boundary k in [lo, turns] with pos(k) ≥ x, or turns + 1. */
  private firstAtLeast(lo: number, x: number): number {
    let a = lo;
    let b = this.turns;
    if (this.pos(b) < x) return b + 1;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (this.pos(m) >= x) b = m;
      else a = m + 1;
    }
    return a;
  }

  /** The smallest turn boundary k in [lo, turns] starting at or after token `x` (or turns). */
  private firstTokenAtLeast(lo: number, x: number): number {
    let a = lo;
    let b = this.turns;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (this.tokensAt(m) >= x) b = m;
      else a = m + 1;
    }
    return a;
  }

  /** The smallest turn boundary k ≥ lo that keeps at most `keep` tokens in `[k, H)`. */
  private keepAtMost(lo: number, keep: number): number {
    return this.firstTokenAtLeast(lo, this.tokensAt(this.turns) - keep);
  }

  /** Tokens in the context: the summary plus the verbatim turns still present. */
  private occupancy(): number {
    return this.summaryTokens + this.tokensAt(this.turns) - this.tokensAt(this.contextTurn);
  }

  /** Drops boundaries below the verbatim start: no later range reaches below it. */
  private trim(): void {
    const dead = this.verbatimTurn - this.base;
    if (dead < TRIM_AFTER) return;
    this.tok = this.tok.slice(dead);
    this.msg = this.msg.slice(dead);
    this.base = this.verbatimTurn;
  }

  // ---- turns --------------------------------------------------------------------------

  private nextRole(): Role {
    const r = this.rng.next();
    switch (this.lastRole) {
      case 'SYSTEM':
      case 'USER':
        return 'ASSISTANT';
      case 'ASSISTANT':
        return r < 0.5 ? 'TOOL_CALL' : r < 0.85 ? 'USER' : 'ASSISTANT';
      case 'TOOL_CALL':
        return 'TOOL_RESULT';
      case 'TOOL_RESULT':
        return r < 0.6 ? 'TOOL_CALL' : 'ASSISTANT';
    }
  }

  private turnTokens(role: Role): number {
    const r = this.rng.next();
    switch (role) {
      case 'SYSTEM':
        return 600 + Math.floor(1400 * r);
      case 'USER':
        return 20 + Math.floor(780 * r * r);
      case 'ASSISTANT':
        return 80 + Math.floor(1420 * r);
      case 'TOOL_CALL':
        return 30 + Math.floor(270 * r);
      case 'TOOL_RESULT':
        return 100 + Math.floor(5900 * r * r);
    }
  }

  private appendTurn(seq: number, at: number): ContextEvent {
    const turn = this.turns;
    let role: Role;
    let pins: Pin[] = [];
    if (turn === 0) role = 'SYSTEM';
    else if (turn === 1) {
      role = 'USER';
      pins = ['CONSTRAINT'];
    } else if (turn === 2) {
      role = 'ASSISTANT';
      pins = ['PLAN'];
    } else {
      role = this.nextRole();
      const p = this.rng.next();
      if (role === 'ASSISTANT' && p < 0.015) pins = ['COMMITMENT'];
      else if (role === 'TOOL_CALL' && p < 0.02) pins = ['OPEN_TOOL_CALL'];
      else if (role === 'USER' && p < 0.01) pins = ['CONSTRAINT'];
    }
    this.lastRole = role;
    const tokens = this.turnTokens(role);
    const messages =
      role === 'TOOL_RESULT' || role === 'ASSISTANT' ? (this.rng.chance(0.2) ? 2 : 1) : 1;
    const tokStart = this.tokensAt(turn);
    const msgStart = this.msg[turn - this.base]!;
    this.tok.push(tokStart + tokens);
    this.msg.push(msgStart + messages);
    this.turns = turn + 1;
    this.counts.turns++;
    return {
      type: 'TurnAppended',
      sessionId: this.id,
      seq,
      eventId: this.eventId(seq),
      occurredAt: at,
      turn,
      tokens: { start: tokStart, end: tokStart + tokens },
      messages: { start: msgStart, end: msgStart + messages },
      role,
      pins,
    };
  }

  // ---- compaction ---------------------------------------------------------------------

  /**
   * The tail start (a turn index) for a compaction now: keeping about 30–50 % of the trigger
   * verbatim, at least the floor (`pos ≤ H − f`), and at or above `minTurn`; null when no such
   * boundary exists yet.
   */
  private chooseTail(minTurn: number, minPos: number): number | null {
    const hi = this.lastAtMost(minTurn, this.head() - this.span);
    const lo = this.firstAtLeast(minTurn, minPos);
    if (hi < lo) return null;
    const keep = this.trigger * (0.3 + 0.2 * this.rng.next());
    const wanted = this.keepAtMost(minTurn, keep);
    return Math.min(hi, Math.max(lo, wanted));
  }

  private request(
    seq: number,
    at: number,
    requestId: string,
    sIn: number,
    eIn: number,
    tailStart: number,
    occupancyTokens: number,
  ): CompactionRequested {
    return {
      type: 'CompactionRequested',
      sessionId: this.id,
      seq,
      eventId: this.eventId(seq),
      occurredAt: at,
      requestId,
      unit: this.unit,
      summaryInput: { start: sIn, end: eIn },
      tailStart,
      occupancyTokens,
    };
  }

  private commit(
    seq: number,
    at: number,
    requestId: string,
    sIn: number,
    eIn: number,
    tailStart: number,
  ): CompactionCommitted {
    return {
      type: 'CompactionCommitted',
      sessionId: this.id,
      seq,
      eventId: this.eventId(seq),
      occurredAt: at,
      requestId,
      unit: this.unit,
      summaryInput: { start: sIn, end: eIn },
      tailStart,
    };
  }

  private truncation(seq: number, at: number, start: number, end: number): ContextEvent {
    return {
      type: 'Truncated',
      sessionId: this.id,
      seq,
      eventId: this.eventId(seq),
      occurredAt: at,
      unit: this.unit,
      range: { start, end },
      reason: 'BUDGET_ENFORCEMENT',
    };
  }

  /** After a commit with tail turn `kt`: the summary replaces everything below it. */
  private committed(kt: number): void {
    this.verbatimTurn = kt;
    this.contextTurn = Math.max(this.contextTurn, kt);
    const covered = this.tokensAt(kt);
    this.summaryTokens = Math.round(Math.min(0.1 * this.trigger, 300 + 0.03 * covered));
    this.truncatedThisCycle = false;
    this.trim();
  }

  /** Well-behaved: compaction first; a covered overlap of the tail may be truncated after. */
  private compaction(seq: number, at: number): ContextEvent | null {
    const v = this.pos(this.verbatimTurn);
    const minTurn = this.verbatimTurn + 1;
    const kt = this.chooseTail(minTurn, Math.max(v, this.maxTruncEnd + this.span));
    if (kt === null) return null;
    const kIn = this.rng.chance(0.5) ? kt : Math.min(this.turns, kt + this.rng.between(1, 3));
    const t = this.pos(kt);
    const eIn = this.pos(kIn);
    const requestId = `c-${++this.requestNo}`;
    const occupancy = this.occupancy();
    this.counts.requests++;
    this.counts.commits++;
    this.queue.push((s, a) => this.commit(s, a, requestId, 0, eIn, t));
    this.committed(kt);
    if (kIn > kt && this.rng.chance(0.6)) {
      // The summary read these verbatim turns too: dropping them loses nothing.
      this.counts.truncations++;
      this.queue.push((s, a) => this.truncation(s, a, t, eIn));
      this.contextTurn = kIn;
      this.maxTruncEnd = Math.max(this.maxTruncEnd, eIn);
    }
    return this.request(seq, at, requestId, 0, eIn, t, occupancy);
  }

  /** Faulty: budget enforcement truncates the oldest verbatim turns, then it compacts. */
  private faultyCompaction(seq: number, at: number): ContextEvent | null {
    const policy = this.plan.policy;
    if (!this.truncatedThisCycle) {
      const from = this.contextTurn;
      // Drop the oldest verbatim turns until occupancy is 5 % of the trigger below it.
      const free = this.occupancy() - policy.triggerTokens + 0.05 * policy.triggerTokens;
      let b = this.firstTokenAtLeast(from, this.tokensAt(from) + free);
      // The first truncation takes the system prompt, the constraint and the plan (the seed).
      if (this.verbatimTurn === 0) b = Math.max(b, 3);
      b = Math.max(b, from + 1);
      // Leave room for a tail at or above the truncation that keeps the floor verbatim.
      if (b > this.lastAtMost(from, this.head() - this.span)) return null;
      const start = this.pos(from);
      const end = this.pos(b);
      this.counts.truncations++;
      this.contextTurn = b;
      this.maxTruncEnd = Math.max(this.maxTruncEnd, end);
      this.truncatedThisCycle = true;
      if (end > this.spilledEnd) this.lossy = true;
      return this.truncation(seq, at, start, end);
    }
    const kt = this.chooseTail(this.contextTurn, this.pos(this.contextTurn));
    if (kt === null) return null;
    const t = this.pos(kt);
    // The summarizer reads what is in the context: the old summary (standing for [0,V)) if
    // there is one, else the verbatim turns left after the truncation (the seed: 8..N).
    const sIn = this.verbatimTurn > 0 ? 0 : this.pos(this.contextTurn);
    const requestId = `c-${++this.requestNo}`;
    const occupancy = this.occupancy();
    this.counts.requests++;
    this.counts.commits++;
    if (this.plan.spillAck && this.lossy) {
      const h = this.head();
      const spillRequestId = `${this.id}:${requestId}:${seq}`;
      if (policy.spill === 'ENABLED') {
        this.counts.spills++;
        this.spilledEnd = h;
        this.queue.push((s, a) => ({
          type: 'SpillCompleted',
          sessionId: this.id,
          seq: s,
          eventId: this.eventId(s),
          occurredAt: a,
          spillRequestId,
          handle: `s3://spills/${this.id}/${requestId}-${seq}`,
          unit: this.unit,
          range: { start: 0, end: h },
          signature: null,
        }));
      } else {
        this.counts.acknowledgements++;
        this.queue.push((s, a) => ({
          type: 'LossAcknowledged',
          sessionId: this.id,
          seq: s,
          eventId: this.eventId(s),
          occurredAt: a,
          unit: this.unit,
          range: { start: 0, end: h },
          by: 'oncall@example.com',
          reason: `sim: context before ${this.unit} ${t} accepted as lost`,
          signature: null,
        }));
      }
      this.lossy = false;
      this.counts.retries++;
      this.queue.push((s, a) => this.request(s, a, requestId, sIn, t, t, occupancy));
    }
    this.queue.push((s, a) => this.commit(s, a, requestId, sIn, t, t));
    this.committed(kt);
    return this.request(seq, at, requestId, sIn, t, t, occupancy);
  }
}
