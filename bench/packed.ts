/**
 * A pre-generated event stream packed into typed arrays (one column per field), with
 * `get(i)` materializing event i as a fresh object, as a decoder would.
 *
 * Why: millions of live event objects make every major GC of a benchmark mark them all, so
 * the timing would measure the pre-generated stream rather than the engine. Typed arrays are
 * leaves to the GC. Only the rare strings (requestIds, spill ids, handles) and the policies
 * are kept as objects; an eventId of the form `<sessionId>-<seq>` is rebuilt, not stored.
 */
import {
  EVENT_TYPES,
  type ContextEvent,
  type EventType,
  type Pin,
  type Policy,
  type Role,
  type TruncationReason,
  type Unit,
} from '../src/engine/events';
import { type FleetOptions, FleetSimulation } from '../src/sim/fleet';
import type { SessionPlan } from '../src/sim/orchestrator';

// The packed `kind` of an event is its index in the engine's list of event types.
const TYPES = EVENT_TYPES;
const UNITS: readonly Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];
const ROLES: readonly Role[] = ['SYSTEM', 'USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT'];
const REASONS: readonly TruncationReason[] = ['BUDGET_ENFORCEMENT', 'MANUAL', 'SUMMARY_EVICTED'];

/** Index of each value of a small enum, for packing. */
function indexOf<T extends string>(values: readonly T[]): Map<T, number> {
  return new Map(values.map((v, i) => [v, i]));
}
const TYPE_INDEX = indexOf(TYPES);
const UNIT_INDEX = indexOf(UNITS);
const ROLE_INDEX = indexOf(ROLES);
const REASON_INDEX = indexOf(REASONS);

/** A table of distinct values, each stored once. */
class Table<T> {
  readonly values: T[] = [];
  private readonly index = new Map<string, number>();
  constructor(private readonly key: (v: T) => string) {}
  add(v: T): number {
    const k = this.key(v);
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(v);
      this.index.set(k, i);
    }
    return i;
  }
}

export class PackedEvents {
  private size = 0;
  private capacity: number;
  private kind: Uint8Array;
  private u0: Uint8Array;
  private u1: Uint8Array;
  private session: Uint32Array;
  private s0: Int32Array;
  private s1: Int32Array;
  /** -1: the eventId is `<sessionId>-<seq>`; else an index into the strings. */
  private eid: Int32Array;
  private seq: Float64Array;
  private at: Float64Array;
  private n: Float64Array[];
  private readonly sessions = new Table<string>((s) => s);
  private readonly strings = new Table<string>((s) => s);
  private readonly policies = new Table<Policy>((p) => JSON.stringify(p));
  private readonly pinSets = new Table<readonly Pin[]>((p) => p.join());

  constructor(capacity = 1024) {
    this.capacity = Math.max(1, capacity);
    const c = this.capacity;
    this.kind = new Uint8Array(c);
    this.u0 = new Uint8Array(c);
    this.u1 = new Uint8Array(c);
    this.session = new Uint32Array(c);
    this.s0 = new Int32Array(c);
    this.s1 = new Int32Array(c);
    this.eid = new Int32Array(c);
    this.seq = new Float64Array(c);
    this.at = new Float64Array(c);
    this.n = Array.from({ length: 5 }, () => new Float64Array(c));
  }

  /** Packs every event of an iterable. */
  static from(events: Iterable<ContextEvent>, capacity?: number): PackedEvents {
    const p = new PackedEvents(capacity);
    for (const e of events) p.push(e);
    return p;
  }

  get length(): number {
    return this.size;
  }

  /** Bytes held by the typed-array columns (the rest: a few tables of strings and policies). */
  get columnBytes(): number {
    return this.capacity * (3 + 4 + 3 * 4 + 7 * 8);
  }

  private grow(): void {
    const c = this.capacity * 2;
    const grown = <A extends Uint8Array | Uint32Array | Int32Array | Float64Array>(
      a: A,
      make: (n: number) => A,
    ): A => {
      const b = make(c);
      b.set(a);
      return b;
    };
    this.kind = grown(this.kind, (k) => new Uint8Array(k));
    this.u0 = grown(this.u0, (k) => new Uint8Array(k));
    this.u1 = grown(this.u1, (k) => new Uint8Array(k));
    this.session = grown(this.session, (k) => new Uint32Array(k));
    this.s0 = grown(this.s0, (k) => new Int32Array(k));
    this.s1 = grown(this.s1, (k) => new Int32Array(k));
    this.eid = grown(this.eid, (k) => new Int32Array(k));
    this.seq = grown(this.seq, (k) => new Float64Array(k));
    this.at = grown(this.at, (k) => new Float64Array(k));
    this.n = this.n.map((a) => grown(a, (k) => new Float64Array(k)));
    this.capacity = c;
  }

  push(e: ContextEvent): void {
    if (this.size === this.capacity) this.grow();
    const i = this.size++;
    const n = this.n;
    this.kind[i] = TYPE_INDEX.get(e.type)!;
    this.session[i] = this.sessions.add(e.sessionId);
    // NaN: an out-of-band event's null seq (contract §3).
    this.seq[i] = e.seq ?? NaN;
    this.at[i] = e.occurredAt;
    this.eid[i] =
      e.seq !== null && e.eventId === `${e.sessionId}-${e.seq}` ? -1 : this.strings.add(e.eventId);
    switch (e.type) {
      case 'SessionOpened':
        n[0]![i] = this.policies.add(e.policy);
        break;
      case 'TurnAppended':
        n[0]![i] = e.turn;
        n[1]![i] = e.tokens.start;
        n[2]![i] = e.tokens.end;
        n[3]![i] = e.messages.start;
        n[4]![i] = e.messages.end;
        this.u0[i] = ROLE_INDEX.get(e.role)!;
        this.s0[i] = this.pinSets.add([...e.pins]);
        break;
      case 'Truncated':
        this.u0[i] = UNIT_INDEX.get(e.unit)!;
        n[0]![i] = e.range.start;
        n[1]![i] = e.range.end;
        this.u1[i] = REASON_INDEX.get(e.reason)!;
        break;
      case 'CompactionRequested':
      case 'CompactionCommitted':
        this.s0[i] = this.strings.add(e.requestId);
        this.u0[i] = UNIT_INDEX.get(e.unit)!;
        n[0]![i] = e.summaryInput.start;
        n[1]![i] = e.summaryInput.end;
        n[2]![i] = e.tailStart;
        n[3]![i] =
          e.type === 'CompactionRequested' && e.occupancyTokens !== null ? e.occupancyTokens : NaN;
        break;
      case 'SpillCompleted':
        this.s0[i] = this.strings.add(e.spillRequestId);
        this.s1[i] = this.strings.add(e.handle);
        this.u0[i] = UNIT_INDEX.get(e.unit)!;
        n[0]![i] = e.range.start;
        n[1]![i] = e.range.end;
        break;
      case 'SpillFailed':
        this.s0[i] = this.strings.add(e.spillRequestId);
        this.s1[i] = this.strings.add(e.error);
        break;
      case 'LossAcknowledged':
        this.u0[i] = UNIT_INDEX.get(e.unit)!;
        n[0]![i] = e.range.start;
        n[1]![i] = e.range.end;
        this.s0[i] = this.strings.add(e.by);
        this.s1[i] = this.strings.add(e.reason);
        break;
      case 'SessionClosed':
        break;
    }
  }

  /** The type of event i, without materializing it. */
  typeOf(i: number): EventType {
    return TYPES[this.kind[i]!]!;
  }

  /** Event i as a fresh object (nested ranges and pins fresh too; policies are shared). */
  get(i: number): ContextEvent {
    if (!(i >= 0 && i < this.size)) throw new RangeError(`no event ${i} (length ${this.size})`);
    const sessionId = this.sessions.values[this.session[i]!]!;
    const seq = this.seq[i]!;
    const seqOrNull = Number.isNaN(seq) ? null : seq;
    const eid = this.eid[i]!;
    const eventId = eid < 0 ? `${sessionId}-${seq}` : this.strings.values[eid]!;
    const occurredAt = this.at[i]!;
    const n = this.n;
    const str = this.strings.values;
    switch (TYPES[this.kind[i]!]!) {
      case 'SessionOpened':
        return {
          type: 'SessionOpened',
          sessionId,
          seq,
          eventId,
          occurredAt,
          policy: this.policies.values[n[0]![i]!]!,
        };
      case 'TurnAppended':
        return {
          type: 'TurnAppended',
          sessionId,
          seq,
          eventId,
          occurredAt,
          turn: n[0]![i]!,
          tokens: { start: n[1]![i]!, end: n[2]![i]! },
          messages: { start: n[3]![i]!, end: n[4]![i]! },
          role: ROLES[this.u0[i]!]!,
          pins: this.pinSets.values[this.s0[i]!]!.slice(),
        };
      case 'Truncated':
        return {
          type: 'Truncated',
          sessionId,
          seq,
          eventId,
          occurredAt,
          unit: UNITS[this.u0[i]!]!,
          range: { start: n[0]![i]!, end: n[1]![i]! },
          reason: REASONS[this.u1[i]!]!,
        };
      case 'CompactionRequested': {
        const occupancy = n[3]![i]!;
        return {
          type: 'CompactionRequested',
          sessionId,
          seq,
          eventId,
          occurredAt,
          requestId: str[this.s0[i]!]!,
          unit: UNITS[this.u0[i]!]!,
          summaryInput: { start: n[0]![i]!, end: n[1]![i]! },
          tailStart: n[2]![i]!,
          occupancyTokens: Number.isNaN(occupancy) ? null : occupancy,
        };
      }
      case 'CompactionCommitted':
        return {
          type: 'CompactionCommitted',
          sessionId,
          seq,
          eventId,
          occurredAt,
          requestId: str[this.s0[i]!]!,
          unit: UNITS[this.u0[i]!]!,
          summaryInput: { start: n[0]![i]!, end: n[1]![i]! },
          tailStart: n[2]![i]!,
        };
      case 'SpillCompleted':
        return {
          type: 'SpillCompleted',
          sessionId,
          seq: seqOrNull,
          eventId,
          occurredAt,
          spillRequestId: str[this.s0[i]!]!,
          handle: str[this.s1[i]!]!,
          unit: UNITS[this.u0[i]!]!,
          range: { start: n[0]![i]!, end: n[1]![i]! },
          signature: null,
        };
      case 'SpillFailed':
        return {
          type: 'SpillFailed',
          sessionId,
          seq: seqOrNull,
          eventId,
          occurredAt,
          spillRequestId: str[this.s0[i]!]!,
          error: str[this.s1[i]!]!,
          signature: null,
        };
      case 'LossAcknowledged':
        return {
          type: 'LossAcknowledged',
          sessionId,
          seq: seqOrNull,
          eventId,
          occurredAt,
          unit: UNITS[this.u0[i]!]!,
          range: { start: n[0]![i]!, end: n[1]![i]! },
          by: str[this.s0[i]!]!,
          reason: str[this.s1[i]!]!,
          signature: null,
        };
      case 'SessionClosed':
        return { type: 'SessionClosed', sessionId, seq, eventId, occurredAt };
    }
  }

  *[Symbol.iterator](): IterableIterator<ContextEvent> {
    for (let i = 0; i < this.size; i++) yield this.get(i);
  }
}

/** The fleet of `generateFleet(options)`, packed (see `PackedEvents`), and its sessions' plans. */
export function generateFleetPacked(options: FleetOptions): {
  packed: PackedEvents;
  plans: Map<string, SessionPlan>;
} {
  const sim = new FleetSimulation(options);
  const packed = new PackedEvents(options.events);
  for (let r = sim.next(); !r.done; r = sim.next()) packed.push(r.value);
  return { packed, plans: sim.plans };
}
