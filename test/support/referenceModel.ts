/**
 * An independent, deliberately naive reference model of contract §3–§6 for one session,
 * written from the contract text only (docs/contract.md): sets of positions are boolean arrays
 * (test/support/referenceSets.ts), the authority check is its own (referenceAuthority.ts), and
 * nothing is shared with src/engine but the types. The differential property test runs the
 * engine and this model side by side.
 *
 * Where the contract leaves a choice open, the model takes the reading noted at that place
 * ("Reading:").
 */
import type { ContextEvent, EngineInput, Policy, RuleCode, Unit } from '../../src/engine';
import {
  type Failure,
  type ModelRing,
  type SignableEvent,
  failedCheck,
  isSignable,
} from './referenceAuthority';
import {
  type Bits,
  type Run,
  Universe,
  coarsenByMerging,
  coarsenByRemoving,
  reported,
} from './referenceSets';

export { type Bits, Universe } from './referenceSets';

/** The largest position an event may name (§3 bounds): 2^52 − 1. */
export const TOP = 4_503_599_627_370_495;

/**
 * Enough room for every position a stream names (ends, heads, tails), plus slack; a position of
 * 2^52 − 1 (or a blind start, whose evidence head is there) gets the universe's top cell.
 */
export function universeFor(events: readonly EngineInput[], blind = false): Universe {
  let max = 0;
  let top = blind;
  for (const e of events) {
    const nums: number[] = [];
    if (e.type === 'TurnAppended') nums.push(e.turn + 1, e.tokens.end, e.messages.end);
    if ('range' in e) nums.push(e.range.start, e.range.end);
    if ('summaryInput' in e) nums.push(e.summaryInput.end, e.tailStart);
    for (const x of nums) {
      if (x === TOP) top = true;
      else max = Math.max(max, x);
    }
  }
  return new Universe(max + 2, top ? TOP : null);
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

export interface ModelRange {
  unit: Unit;
  start: number;
  end: number;
}

export interface ModelReason {
  code: RuleCode;
  holes: ModelRange[];
}

export interface ModelVerdict {
  sessionId: string;
  requestId: string;
  decision: 'APPROVE' | 'REFUSE';
  basis: 'INVARIANT_HOLDS' | 'LOSSLESS_SPILL' | 'LOSS_ACKNOWLEDGED' | null;
  action: 'NONE' | 'SPILL' | 'HALT';
  reasons: ModelReason[];
  rulesChecked: RuleCode[];
  spillRequestId: string | null;
  inputSeq: number;
  /** The request's eventId (rev 12); null when a malformed request's did not decode. */
  requestEventId: string | null;
  requestedAt: number | null;
  decidedAt: number;
  engineVersion: string;
}

export interface ModelSpill {
  spillRequestId: string;
  sessionId: string;
  requestId: string;
  /** Always the request's eventId: a malformed request (whose may be null) asks for no spill. */
  requestEventId: string | null;
  unit: Unit;
  range: { start: number; end: number };
  holes: ModelRange[];
  reasons: ModelReason[];
  requestedAt: number | null;
}

export interface ModelAudit {
  kind: 'ADVISORY' | 'VIOLATION';
  code: string;
  sessionId: string;
  inputSeq: number | null;
  requestId: string | null;
  ranges: ModelRange[];
  occurredAt: number;
  /** UNAUTHORIZED_EVENT: the check that failed (its message must say so). */
  failed?: Failure;
  /** STATE_COARSENED: the sets that were coarsened (its message names them). */
  sets?: string[];
}

export type ModelOutput =
  | { record: 'audit'; value: ModelAudit }
  | { record: 'verdict'; value: ModelVerdict }
  | { record: 'spill-request'; value: ModelSpill };

interface Request {
  requestId: string;
  unit: Unit;
  sIn: number;
  eIn: number;
  t: number;
}

interface Stored extends Request {
  verdict: ModelVerdict;
  /** An accepted non-request event or a gap since it was decided. */
  stale: boolean;
}

type PerUnit = Partial<Record<Unit, Bits>>;
type Heads = Record<Unit, number>;

const UNITS: Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];

export interface ModelState {
  policy: Policy | null;
  lastSeq: number;
  /** seq → eventId for the 32 highest accepted seqs. */
  ids: Map<number, string>;
  /** The eventIds of the last 8 out-of-band events accepted, oldest first. */
  oob: string[];
  Hg: number | null;
  head: Heads;
  last: { turn: number; tokens: [number, number]; messages: [number, number] } | null;
  V: number;
  pins: Bits;
  T: Bits;
  S: Bits;
  A0: Bits;
  P: PerUnit;
  A1: PerUnit;
  X: PerUnit;
  /** K (§4a): in U with a policy, per unit without. */
  K: PerUnit;
  spillFailed: boolean;
  pending: { id: string; unit: Unit; start: number; end: number } | null;
  stored: Stored[];
  closedAt: number | null;
  lastEventAt: number | null;
  /** F (§4): per unit, or null (none). */
  F: Heads | null;
  /**
   * The extent E (§4, rev 12) per unit: the greatest position told by events that advanced the
   * session, never below F. Only an unknown session uses it (its spills and acknowledgements
   * are clipped to [0, E)); it is kept whatever the policy, as nothing reads it then.
   */
  E: Heads;
  contested: boolean;
}

export interface ModelOptions {
  graceMs: number;
  idleMs: number;
  engineVersion: string;
  /** The trusted key ring of §4b, or null (signatures not looked at). */
  ring: ModelRing | null;
  /**
   * The bounds on (the contract), or off: no §4a coarsening (so no K) and every reported list
   * exact (no §6 bound), an unbounded model to compare the engine against.
   */
  bounded: boolean;
}

export function modelOptions(o: Partial<ModelOptions> = {}): ModelOptions {
  return {
    graceMs: 60 * 60 * 1000,
    idleMs: 30 * 24 * 60 * 60 * 1000,
    engineVersion: 'compaction-guard-engine/3.0.0',
    ring: null,
    bounded: true,
    ...o,
  };
}

function freshState(u: Universe): ModelState {
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
    K: {},
    spillFailed: false,
    pending: null,
    stored: [],
    closedAt: null,
    lastEventAt: null,
    F: null,
    E: { TURNS: 0, TOKENS: 0, MESSAGES: 0 },
    contested: false,
  };
}

/** One event's outputs, in the order §6 fixes: audit records, the verdict, the spill request. */
class Outputs {
  readonly audits: ModelAudit[] = [];
  readonly rest: ModelOutput[] = [];

  constructor(
    private readonly e: EngineInput,
    private readonly decidedAt: number,
  ) {}

  audit(
    kind: ModelAudit['kind'],
    code: string,
    ranges: ModelRange[] = [],
    extra: Partial<ModelAudit> = {},
  ): void {
    const e = this.e;
    this.audits.push({
      kind,
      code,
      sessionId: e.sessionId,
      inputSeq: e.seq,
      requestId: 'requestId' in e ? e.requestId : null,
      ranges,
      // Reading (decision 11): an answered malformed request whose occurredAt did not decode
      // stamps its audit records with the decision time.
      occurredAt: e.occurredAt ?? this.decidedAt,
      ...extra,
    });
  }

  all(): ModelOutput[] {
    return [...this.audits.map((value) => ({ record: 'audit' as const, value })), ...this.rest];
  }
}

export class ReferenceSession {
  s: ModelState;
  readonly opts: ModelOptions;
  /**
   * Whether the session has a state at all (rev 12, §4b: an out-of-band event that fails the
   * authority check creates none). A session without one is modelled by a fresh state, which is
   * exactly what its first event that creates one finds.
   */
  exists: boolean;
  /** Whether the event being handled advances the session (§4, rev 12). */
  private advancing = false;

  constructor(
    readonly u: Universe,
    options: Partial<ModelOptions> = {},
    /** `blind`: the state of a session whose earlier events are gone (F at 2^52 − 1). */
    start: 'empty' | 'blind' = 'empty',
  ) {
    this.opts = modelOptions(options);
    this.s = freshState(u);
    this.exists = start === 'blind';
    if (start === 'blind') {
      this.s.F = { TURNS: TOP, TOKENS: TOP, MESSAGES: TOP };
      this.s.E = { ...this.s.F };
    }
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

  private ranges(runs: readonly Run[], unit: Unit): ModelRange[] {
    return runs.map(([start, end]) => ({ unit, start, end }));
  }

  /**
   * One range of an event, as an audit record's `ranges`. Reading (as decision 9's lists): a
   * list of ranges names positions, so an empty range is no item.
   */
  private one(unit: Unit, r: { start: number; end: number }): ModelRange[] {
    return r.end > r.start ? [{ unit, start: r.start, end: r.end }] : [];
  }

  /** A set as a reported list (§6: at most 16 items). */
  private report(b: Bits, unit: Unit): ModelRange[] {
    const runs = this.u.runs(b);
    return this.ranges(this.opts.bounded ? reported(runs) : runs, unit);
  }

  /**
   * Step 2: Hg := max(Hg, H, position); every gap makes stored verdicts stale and (rev 12, step
   * 1) expires the one-compaction acceptance, with or without a policy: A1 := ∅.
   */
  private gap(position: number): void {
    for (const v of this.s.stored) v.stale = true;
    this.s.A1 = {};
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

  /** §4: the grace period after SessionClosed, or the idle period after lastEventAt, has passed. */
  private expired(at: number): boolean {
    const s = this.s;
    const grace = s.closedAt !== null && at - s.closedAt > this.opts.graceMs;
    const idle = s.lastEventAt !== null && at - s.lastEventAt > this.opts.idleMs;
    return grace || idle;
  }

  /**
   * §4 (rev 12): whether `e` advances the session, decided on the state before it: in band at
   * exactly the next seq (0 when there is no last seq), or out of band and not a redelivery;
   * with a key ring a LossAcknowledged, SpillCompleted or SpillFailed must also be authorized,
   * checked against the session as it is. A SessionOpened with seq 0 also advances a session
   * past its grace or idle period. A dead letter (an answered malformed request) never does.
   */
  private advances(e: EngineInput): boolean {
    if (e.type === 'MalformedRequest') return false;
    const s = this.s;
    if (e.seq === null) {
      if (s.oob.includes(e.eventId)) return false;
    } else if (e.seq !== s.lastSeq + 1) {
      return e.type === 'SessionOpened' && e.seq === 0 && this.expired(e.occurredAt);
    }
    if (this.opts.ring !== null && isSignable(e))
      return failedCheck(e as SignableEvent, this.opts.ring, s.lastEventAt) === null;
    return true;
  }

  /**
   * §4: the grace check, then the idle check, both in event time, for an event that advances
   * the session. A dropped state leaves an unknown one that keeps its lastEventAt, the eventIds
   * of its last 8 out-of-band events (rev 12) and its evidence head F; its extent E starts at F.
   * (After a grace drop the idle check could drop the new state again; that changes nothing,
   * as the new state already holds only what a drop hands on.)
   */
  private dropIfExpired(at: number): void {
    const s = this.s;
    if (!this.expired(at)) return;
    // Reading: a dropped known state always hands on F, even when every head is 0 (§4: "in each
    // unit, the dropped state's head"); an unknown state without F hands on none.
    let F: Heads | null = s.F;
    if (s.policy) {
      F = { ...s.head };
      F[this.U()] = this.knownHead();
    }
    const E = F ? { ...F } : { TURNS: 0, TOKENS: 0, MESSAGES: 0 };
    this.s = { ...freshState(this.u), lastEventAt: s.lastEventAt, oob: [...s.oob], F, E };
  }

  step(e: EngineInput, decidedAt: number): ModelOutput[] {
    const out = new Outputs(e, decidedAt);
    const malformed = e.type === 'MalformedRequest';
    // §4 (rev 12): decided once, on the state before the event; only an event that advances the
    // session triggers the grace or idle drop or sets lastEventAt (§3: a dead-lettered record,
    // answered or not, does neither).
    const advancing = (this.advancing = this.advances(e));
    if (advancing && !malformed) this.dropIfExpired(e.occurredAt);
    const existed = this.exists;
    this.exists = true;
    const s = this.s;
    const seq = e.seq;
    let undoOutOfBand: (() => void) | null = null;
    let applied = true;
    if (seq === null) {
      // Step 0: out of band. A redelivery is among the last 8 accepted out-of-band eventIds;
      // otherwise it joins them (FIFO), steps 1-2 are skipped, and it counts as accepted.
      const id = (e as ContextEvent).eventId;
      if (s.oob.includes(id)) return [];
      const before = s.oob;
      s.oob = [...s.oob, id].slice(-8);
      undoOutOfBand = () => {
        s.oob = before;
      };
      for (const v of s.stored) v.stale = true;
    } else {
      // Step 1.
      let conflict = false;
      let gap = false;
      if (s.lastSeq >= 0 && seq <= s.lastSeq) {
        if (!malformed && s.ids.get(seq) === (e as ContextEvent).eventId) return [];
        conflict = true;
      } else if (seq > s.lastSeq + 1) gap = true;
      if (conflict) out.audit('VIOLATION', 'SEQ_CONFLICT');
      if (conflict || gap) this.gap(s.policy ? this.named(e) : 0);
      if (!conflict && !malformed) {
        s.ids.set(seq, (e as ContextEvent).eventId);
        const keep = [...s.ids.keys()].sort((a, b) => b - a).slice(0, 32);
        for (const k of [...s.ids.keys()]) if (!keep.includes(k)) s.ids.delete(k);
      }
      s.lastSeq = Math.max(s.lastSeq, seq);
      if (e.type !== 'CompactionRequested' && !malformed) for (const v of s.stored) v.stale = true;
      // Reading: a SessionOpened in conflict makes the policy contested even when the session
      // has no policy yet (the flag carries over when one arrives: §4 discards only P, A1, X, K
      // and F then).
      if (conflict && e.type === 'SessionOpened') s.contested = true;
      const survives =
        e.type === 'CompactionRequested' ||
        malformed ||
        e.type === 'SpillCompleted' ||
        e.type === 'LossAcknowledged';
      applied = !conflict || survives;
    }
    if (applied) {
      // §4b: checked where step 3 would apply the event, before anything else step 3 does.
      const failure =
        this.opts.ring !== null && isSignable(e)
          ? failedCheck(e as SignableEvent, this.opts.ring, s.lastEventAt)
          : null;
      if (failure !== null) {
        const ranges = 'range' in e ? this.one(e.unit, e.range) : [];
        out.audit('VIOLATION', 'UNAUTHORIZED_EVENT', ranges, { failed: failure });
        if (undoOutOfBand) {
          undoOutOfBand();
          // Rev 12: an out-of-band one leaves no state behind; a session that had none still
          // has none (a fresh state, which it had before, as nothing else changed).
          this.exists = existed;
        }
        return out.all(); // not applied, and it does not set lastEventAt (it did not advance)
      }
      this.apply(e, decidedAt, out);
      if (this.opts.bounded) this.coarsen(out);
    }
    // §4: lastEventAt, the last thing an event that advanced the session does (rev 12: an event
    // at a gap seq or in conflict does not set it).
    if (advancing && !malformed)
      s.lastEventAt = Math.max(s.lastEventAt ?? e.occurredAt, e.occurredAt);
    return out.all();
  }

  /** §4, extent E (rev 12): raised in one unit by an event that advances the session. */
  private raiseExtent(unit: Unit, position: number): void {
    this.s.E = { ...this.s.E, [unit]: Math.max(this.s.E[unit], position) };
  }

  /** §4: E is never below F (E := max(E, F) whenever F rises). */
  private extentAtLeastF(): void {
    const F = this.s.F;
    if (F) for (const unit of UNITS) this.raiseExtent(unit, F[unit]);
  }

  /** Step 3. */
  private apply(e: EngineInput, decidedAt: number, out: Outputs): void {
    const s = this.s;
    const u = this.u;
    switch (e.type) {
      case 'SessionOpened': {
        if (s.policy) break;
        s.policy = e.policy;
        s.P = {};
        s.A1 = {};
        s.X = {};
        s.K = {};
        s.F = null;
        if (e.policy.triggerTokens >= e.policy.ceilingTokens)
          out.audit('ADVISORY', 'TRIGGER_NOT_BELOW_CEILING');
        if (e.policy.floor.unit !== e.policy.truncatorUnit) out.audit('ADVISORY', 'UNIT_MISMATCH');
        break;
      }
      case 'TurnAppended': {
        // §4, extent E (rev 12): the end of every TurnAppended that advances the session, in
        // each unit, even when otherwise ignored.
        if (this.advancing) this.raiseExtent('TURNS', e.turn + 1);
        if (this.advancing) this.raiseExtent('TOKENS', e.tokens.end);
        if (this.advancing) this.raiseExtent('MESSAGES', e.messages.end);
        if (!s.policy) {
          // §4: an unknown state that has F raises it to the end of every turn, in each unit.
          if (s.F)
            s.F = {
              TURNS: Math.max(s.F.TURNS, e.turn + 1),
              TOKENS: Math.max(s.F.TOKENS, e.tokens.end),
              MESSAGES: Math.max(s.F.MESSAGES, e.messages.end),
            };
          this.extentAtLeastF();
          break;
        }
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
        if (this.advancing) this.raiseExtent(e.unit, e.range.end);
        if (!s.policy) {
          // §4: ... and, in its unit, to the end of every Truncated range.
          if (s.F) s.F = { ...s.F, [e.unit]: Math.max(s.F[e.unit], e.range.end) };
          this.extentAtLeastF();
          break;
        }
        const U = this.U();
        if (e.unit !== U) {
          out.audit('VIOLATION', 'UNPLACEABLE_RANGE', this.one(e.unit, e.range));
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
        if (!u.isEmpty(pinned)) out.audit('ADVISORY', 'PINNED_EVICTED', this.report(pinned, U));
        else if (s.policy.coverage === 'STRICT' && !u.isEmpty(lost))
          out.audit('ADVISORY', 'CONTENT_EVICTED', this.report(lost, U));
        break;
      }
      case 'CompactionRequested':
        this.request(e, decidedAt, out);
        break;
      case 'MalformedRequest':
        out.rest.push({
          record: 'verdict',
          value: {
            sessionId: e.sessionId,
            requestId: e.requestId,
            decision: 'REFUSE',
            basis: null,
            action: 'HALT',
            reasons: [{ code: 'INVALID_REQUEST', holes: [] }],
            rulesChecked: ['INVALID_REQUEST'],
            spillRequestId: null,
            inputSeq: e.seq,
            // Rev 12: its eventId, or null when that did not decode.
            requestEventId: (e as { eventId?: string | null }).eventId ?? null,
            requestedAt: e.occurredAt,
            decidedAt,
            engineVersion: this.opts.engineVersion,
          },
        });
        break;
      case 'CompactionCommitted':
        this.commit(e, out);
        break;
      case 'SpillCompleted': {
        const r = u.range(e.range.start, e.range.end);
        if (s.policy) {
          const U = this.U();
          if (e.unit !== U) {
            out.audit('VIOLATION', 'UNPLACEABLE_RANGE', this.one(e.unit, e.range));
            break;
          }
          s.P[U] = u.or(this.get(s.P, U), u.and(r, u.range(0, this.knownHead())));
        } else
          // Rev 12: an unknown session's spill is clipped to its extent E in the range's unit.
          s.P[e.unit] = u.or(this.get(s.P, e.unit), u.and(r, u.range(0, s.E[e.unit])));
        if (e.range.end > e.range.start) s.spillFailed = false;
        const p = s.pending;
        if (p && p.id === e.spillRequestId) {
          const asked = u.range(p.start, p.end);
          const missing = p.unit === e.unit ? u.minus(asked, r) : asked;
          if (!u.isEmpty(missing)) {
            s.X[p.unit] = u.or(this.get(s.X, p.unit), missing);
            out.audit('VIOLATION', 'SPILL_INCOMPLETE', this.report(missing, p.unit));
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
            out.audit('VIOLATION', 'UNPLACEABLE_RANGE', this.one(e.unit, e.range));
            break;
          }
          r = u.and(r, u.range(0, this.knownHead()));
          // (1) range ∩ (T − (S ∪ P)) − K joins A0.
          const lost = u.minus(s.T, u.or(s.S, this.get(s.P, unit)));
          s.A0 = u.or(s.A0, u.minus(u.and(r, lost), this.get(s.K, unit)));
          if (s.Hg !== null && u.subset(u.range(0, s.Hg), r)) {
            s.Hg = null;
            // In band only: an out-of-band acknowledgement leaves the sequence as it is.
            if (e.seq !== null) {
              s.lastSeq = e.seq;
              s.ids = new Map([[e.seq, e.eventId]]);
            }
          }
        } else r = u.and(r, u.range(0, s.E[unit])); // rev 12: an unknown session's, to [0, E)
        s.A1 = { [unit]: r };
        s.spillFailed = false;
        out.audit('ADVISORY', 'LOSS_ACKNOWLEDGED', this.report(r, unit));
        break;
      }
      case 'SessionClosed':
        // Rev 12: only when it advances the session (at a gap seq it records nothing).
        if (this.advancing) s.closedAt = e.occurredAt;
        break;
    }
  }

  private request(
    e: Extract<EngineInput, { type: 'CompactionRequested' }>,
    decidedAt: number,
    out: Outputs,
  ): void {
    const s = this.s;
    const req: Request = {
      requestId: e.requestId,
      unit: e.unit,
      sIn: e.summaryInput.start,
      eIn: e.summaryInput.end,
      t: e.tailStart,
    };
    // §4, extent E (rev 12): max(summaryInput.end, tailStart) of every request an unknown
    // session decides, when it advances the session. Reading (decision 168): a request answered
    // from the store is decided too (step 3's "decide (§5)" includes §5's repeated-requestId
    // rule), and it is an event that advances the session telling those positions.
    if (!s.policy && this.advancing) this.raiseExtent(e.unit, Math.max(req.eIn, req.t));
    const i = s.stored.findIndex((v) => v.requestId === e.requestId);
    const st = i >= 0 ? s.stored[i]! : null;
    const same =
      st !== null &&
      st.unit === req.unit &&
      st.sIn === req.sIn &&
      st.eIn === req.eIn &&
      st.t === req.t;
    if (st && same && !st.stale) {
      // Rev 12: unchanged but for requestEventId, the request just received.
      out.rest.push({ record: 'verdict', value: { ...st.verdict, requestEventId: e.eventId } });
      s.stored.splice(i, 1);
      s.stored.push(st); // reading (decision 7): "the last 16 requestIds" = most recently requested
      return;
    }
    if (st && !same) out.audit('VIOLATION', 'REQUEST_ID_REUSED', this.one(e.unit, e.summaryInput));
    const { verdict, spill } = this.decide(req, e, decidedAt);
    out.rest.push({ record: 'verdict', value: verdict });
    if (i >= 0) s.stored.splice(i, 1);
    s.stored.push({ ...req, verdict, stale: false });
    if (s.stored.length > 16) s.stored.shift();
    if (spill) {
      out.rest.push({ record: 'spill-request', value: spill });
      s.pending = { id: spill.spillRequestId, unit: spill.unit, ...spill.range };
    }
  }

  private commit(e: Extract<EngineInput, { type: 'CompactionCommitted' }>, out: Outputs): void {
    const s = this.s;
    const u = this.u;
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
      out.audit('VIOLATION', 'COMMITTED_WITHOUT_APPROVAL', this.one(e.unit, e.summaryInput));
    else {
      const ev = this.evaluate(req);
      if (ev.fired.length > 0) {
        const holes = ev.fired.reduce((acc, f) => u.or(acc, f.holes), u.empty());
        out.audit('VIOLATION', 'APPROVAL_STALE_AT_COMMIT', this.report(holes, ev.unit));
      }
    }
    s.A1 = {};
    if (!s.policy) return;
    const U = this.U();
    if (e.unit !== U) {
      out.audit('VIOLATION', 'UNPLACEABLE_RANGE', this.one(e.unit, e.summaryInput));
      this.gap(0);
      return;
    }
    const hp = this.knownHead();
    const t = Math.min(e.tailStart, hp);
    const I = u.minus(u.and(u.range(req.sIn, req.eIn), u.range(0, hp)), u.minus(s.T, s.S));
    s.T = u.or(s.T, u.minus(u.range(0, Math.max(t, s.V)), I));
    s.S = I;
    s.V = Math.max(s.V, t);
  }

  /**
   * §4a, at the end of step 3: every set over 128 ranges is coarsened (pins, T, X by merging;
   * S, P, A0, A1 by removing), every position whose membership changed joins K in the set's unit,
   * K itself is merged down, and one STATE_COARSENED names the sets.
   * Reading: K is coarsened once, after every other set's changes joined it (§4a does not say
   * whether K is merged after each set or once).
   */
  private coarsen(out: Outputs): void {
    const s = this.s;
    const u = this.u;
    const U: Unit | null = s.policy ? this.U() : null;
    const names: string[] = [];
    const gained: PerUnit = {};
    const note = (name: string, unit: Unit, before: Bits, after: Bits) => {
      if (u.equal(before, after)) return;
      if (!names.includes(name)) names.push(name);
      const changed = u.or(u.minus(before, after), u.minus(after, before));
      gained[unit] = u.or(this.get(gained, unit), changed);
    };
    if (U) {
      const single: [string, 'pins' | 'T' | 'S' | 'A0', boolean][] = [
        ['pins', 'pins', true],
        ['T', 'T', true],
        ['S', 'S', false],
        ['A0', 'A0', false],
      ];
      for (const [name, key, merge] of single) {
        const before = s[key];
        s[key] = merge ? coarsenByMerging(u, before) : coarsenByRemoving(u, before);
        note(name, U, before, s[key]);
      }
    }
    const perUnit: [string, 'P' | 'A1' | 'X', boolean][] = [
      ['P', 'P', false],
      ['A1', 'A1', false],
      ['X', 'X', true],
    ];
    for (const [name, key, merge] of perUnit) {
      for (const unit of UNITS) {
        const before = s[key][unit];
        if (!before) continue;
        const after = merge ? coarsenByMerging(u, before) : coarsenByRemoving(u, before);
        s[key] = { ...s[key], [unit]: after };
        note(name, unit, before, after);
      }
    }
    if (names.length === 0) return;
    for (const unit of UNITS) {
      const g = gained[unit];
      if (!g) continue;
      const joined = u.or(this.get(s.K, unit), g);
      const merged = coarsenByMerging(u, joined);
      if (!u.equal(joined, merged) && !names.includes('K')) names.push('K');
      s.K = { ...s.K, [unit]: merged };
    }
    out.audit('ADVISORY', 'STATE_COARSENED', [], { sets: names });
  }

  /** P ∪ A in a unit (A0 only exists in U of a known session). */
  private heal(unit: Unit, withAck: boolean): Bits {
    const s = this.s;
    const u = this.u;
    const P = this.get(s.P, unit);
    if (!withAck) return P;
    const A0 = s.policy && unit === this.U() ? s.A0 : u.empty();
    return u.or(P, u.or(A0, this.get(s.A1, unit)));
  }

  /** F in a unit, 0 when none. */
  private evidence(unit: Unit): number {
    return this.s.F ? this.s.F[unit] : 0;
  }

  /** §5: the rules, top-down, with their unhealed holes (and, for holeless rules, their need). */
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
    const heal = this.heal(unit, withAck);
    const head0t = u.range(0, r.t);
    const hole = (code: RuleCode, h: Bits) => {
      rulesChecked.push(code);
      const left = u.minus(h, heal);
      if (!u.isEmpty(left)) fired.push({ code, holes: left, need: null });
    };
    const holeless = (code: RuleCode, applies: boolean, healable: boolean, need: Bits) => {
      rulesChecked.push(code);
      if (!applies) return;
      if (!healable || !u.isEmpty(need)) fired.push({ code, holes: u.empty(), need });
    };
    // UNKNOWN_SESSION: healed iff [0, max(t, F)) ⊆ P ∪ A in ru (F: 0 when none; a known
    // session has none). Reading (the project's decision 80): a contested session's P and A are
    // in U, so it heals iff [0, t) ⊆ P ∪ A of U, even when ru ≠ U. The text's "in ru" would
    // find nothing recoverable in ru and fire for t > 0; UNIT_MISMATCH refuses such a request
    // anyway, so only the reasons listed differ.
    const unknownNeed = u.minus(
      u.range(0, Math.max(r.t, this.evidence(r.unit))),
      this.heal(s.policy ? this.U() : r.unit, withAck),
    );
    if (!s.policy) {
      holeless('UNKNOWN_SESSION', true, true, unknownNeed);
      const valid = 0 <= r.sIn && r.sIn <= r.eIn && 0 <= r.t;
      holeless('INVALID_REQUEST', !valid, false, u.minus(head0t, heal));
      return { rulesChecked, fired, unit };
    }
    const U = unit;
    const hp = this.knownHead();
    const f = s.policy.floor.span;
    const need = u.minus(head0t, heal);
    // A contested policy: UNKNOWN_SESSION first, then every rule of a known session.
    holeless('UNKNOWN_SESSION', s.contested, true, unknownNeed);
    if (s.Hg !== null) hole('EVENT_GAP', u.range(0, s.Hg));
    else rulesChecked.push('EVENT_GAP');
    const ruOther = r.unit !== U;
    holeless('UNIT_MISMATCH', ruOther || s.policy.truncatorUnit !== U, !ruOther, need);
    if (ruOther) return { rulesChecked, fired, unit };
    const valid = 0 <= r.sIn && r.sIn <= r.eIn && r.eIn <= hp && s.V <= r.t && r.t <= hp;
    holeless('INVALID_REQUEST', !valid, false, need);
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
    e: { seq: number; occurredAt: number; sessionId: string; eventId: string },
    decidedAt: number,
  ): { verdict: ModelVerdict; spill: ModelSpill | null } {
    const { seq, occurredAt, sessionId } = e;
    const u = this.u;
    const s = this.s;
    const ev = this.evaluate(r);
    const refused = ev.fired.length > 0;
    let basis: ModelVerdict['basis'] = null;
    let action: ModelVerdict['action'] = 'NONE';
    if (!refused) {
      const P = this.get(s.P, ev.unit);
      // Known session: t > 0 and [0,t) ⊆ P; unknown: the same with max(t, F).
      const m = s.policy ? r.t : Math.max(r.t, this.evidence(r.unit));
      if (this.evaluate(r, false).fired.length > 0) basis = 'LOSS_ACKNOWLEDGED';
      else if (m > 0 && u.subset(u.range(0, m), P)) basis = 'LOSSLESS_SPILL';
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
    const reasons = ev.fired.map((f) => ({ code: f.code, holes: this.report(f.holes, ev.unit) }));
    const verdict: ModelVerdict = {
      sessionId,
      requestId: r.requestId,
      decision: refused ? 'REFUSE' : 'APPROVE',
      basis,
      action,
      reasons,
      rulesChecked: ev.rulesChecked,
      spillRequestId: id,
      inputSeq: seq,
      requestEventId: e.eventId,
      requestedAt: occurredAt,
      decidedAt,
      engineVersion: this.opts.engineVersion,
    };
    if (!id) return { verdict, spill: null };
    // Reading: a spill request's holes are the union of the fired rules' unhealed holes as
    // sets, bounded once (§6), not the union of the verdict's already bounded lists.
    const holes = ev.fired.reduce((acc, f) => u.or(acc, f.holes), u.empty());
    const range = s.policy
      ? { start: 0, end: this.knownHead() }
      : { start: 0, end: Math.max(r.eIn, r.t, this.evidence(r.unit)) };
    return {
      verdict,
      spill: {
        spillRequestId: id,
        sessionId,
        requestId: r.requestId,
        requestEventId: e.eventId,
        unit: ev.unit,
        range,
        holes: this.report(holes, ev.unit),
        reasons,
        requestedAt: occurredAt,
      },
    };
  }
}

export { RULES };
