/** Builds well-formed event streams for one session: seq, eventId and occurredAt follow. */
import type {
  ContextEvent,
  Pin,
  Policy,
  Role,
  Signature,
  TruncationReason,
  Unit,
} from '../../src/engine/events';

export const SEED_POLICY: Policy = {
  windowTokens: 200_000,
  triggerTokens: 160_000,
  ceilingTokens: 160_000,
  floor: { unit: 'TURNS', span: 12 },
  truncatorUnit: 'TURNS',
  coverage: 'STRICT',
  spill: 'ENABLED',
};

type Body<T extends ContextEvent['type']> = Omit<
  Extract<ContextEvent, { type: T }>,
  'type' | 'sessionId' | 'seq' | 'eventId' | 'occurredAt' | 'signature'
> & { signature?: Signature | null };

/** Envelope fields to force on the next emitted event (see `SessionBuilder.next`). */
export interface EnvelopeOverride {
  seq?: number;
  eventId?: string;
  occurredAt?: number;
  /**
   * Out of band (contract §3, §4 step 0): seq null, an eventId of its own; the sequence does not
   * move. Only SpillCompleted, SpillFailed and LossAcknowledged may be sent so.
   */
  outOfBand?: boolean;
}

/** The three signable types carry `signature` (contract §4b), null unless the body gives one. */
function signable(type: ContextEvent['type']): { signature?: null } {
  return SIGNABLE.includes(type) ? { signature: null } : {};
}
const SIGNABLE: readonly string[] = ['SpillCompleted', 'SpillFailed', 'LossAcknowledged'];

export class SessionBuilder {
  readonly events: ContextEvent[] = [];
  private seq = 0;
  private outOfBandCount = 0;
  private turnNo = 0;
  private tokens = 0;
  private messages = 0;
  private override: EnvelopeOverride = {};

  constructor(
    readonly sessionId: string,
    private t0 = 1_767_225_600_000,
    private readonly stepMs = 1000,
  ) {}

  emit<T extends ContextEvent['type']>(type: T, body: Body<T>, seq = this.seq): ContextEvent {
    const o = this.override;
    this.override = {};
    if (o.outOfBand === true) {
      const e = {
        type,
        sessionId: this.sessionId,
        seq: null,
        eventId: o.eventId ?? `${this.sessionId}-oob${this.outOfBandCount++}`,
        occurredAt: o.occurredAt ?? this.t0 + this.seq * this.stepMs,
        ...signable(type),
        ...body,
      } as unknown as ContextEvent;
      this.events.push(e);
      return e;
    }
    const s = o.seq ?? seq;
    const e = {
      type,
      sessionId: this.sessionId,
      seq: s,
      eventId: o.eventId ?? `${this.sessionId}-e${s}`,
      occurredAt: o.occurredAt ?? this.t0 + s * this.stepMs,
      ...signable(type),
      ...body,
    } as unknown as ContextEvent;
    this.seq = Math.max(this.seq, s + 1);
    this.events.push(e);
    return e;
  }

  /** Forces envelope fields (seq, eventId, occurredAt) on the next emitted event only. */
  next(override: EnvelopeOverride): this {
    this.override = override;
    return this;
  }

  /** The next emitted event goes out of band (seq null). */
  outOfBand(): this {
    this.override = { ...this.override, outOfBand: true };
    return this;
  }

  /** Skips `n` seqs: the next event reveals a gap (contract §4 step 1). */
  skipSeq(n = 1): this {
    this.seq += n;
    return this;
  }

  /** Moves event time forward by `ms` for every later event (e.g. past a grace period). */
  advanceTime(ms: number): this {
    this.t0 += ms;
    return this;
  }

  /** The seq the next event gets (unless overridden). */
  get nextSeq(): number {
    return this.seq;
  }

  /** The last emitted event. */
  get last(): ContextEvent {
    const e = this.events[this.events.length - 1];
    if (!e) throw new Error('no event emitted yet');
    return e;
  }

  /** Replaces the last event with `f(last)` (e.g. signed, contract §4b). */
  mapLast(f: (e: ContextEvent) => ContextEvent): this {
    this.events[this.events.length - 1] = f(this.last);
    return this;
  }

  /**
   * A turn at explicit positions (to build discontinuities); later `turn()` calls continue
   * after it.
   */
  turnAt(
    turn: number,
    tokens: [number, number],
    messages: [number, number],
    pins: Pin[] = [],
    role: Role = 'ASSISTANT',
  ): this {
    this.emit('TurnAppended', {
      turn,
      tokens: { start: tokens[0], end: tokens[1] },
      messages: { start: messages[0], end: messages[1] },
      role,
      pins,
    });
    this.turnNo = turn + 1;
    this.tokens = tokens[1];
    this.messages = messages[1];
    return this;
  }

  /** `n` turns of `tokens` tokens and one message each. */
  turns(n: number, tokens = 100, pins: Pin[] = []): this {
    for (let i = 0; i < n; i++) this.turn(tokens, 'ASSISTANT', pins);
    return this;
  }

  open(policy: Policy = SEED_POLICY): this {
    this.emit('SessionOpened', { policy });
    return this;
  }

  turn(tokens: number, role: Role = 'ASSISTANT', pins: Pin[] = [], messages = 1): this {
    this.emit('TurnAppended', {
      turn: this.turnNo,
      tokens: { start: this.tokens, end: this.tokens + tokens },
      messages: { start: this.messages, end: this.messages + messages },
      role,
      pins,
    });
    this.turnNo += 1;
    this.tokens += tokens;
    this.messages += messages;
    return this;
  }

  truncate(
    unit: Unit,
    start: number,
    end: number,
    reason: TruncationReason = 'BUDGET_ENFORCEMENT',
  ): this {
    this.emit('Truncated', { unit, range: { start, end }, reason });
    return this;
  }

  request(requestId: string, unit: Unit, sIn: number, eIn: number, tailStart: number): this {
    this.emit('CompactionRequested', {
      requestId,
      unit,
      summaryInput: { start: sIn, end: eIn },
      tailStart,
      occupancyTokens: this.tokens,
    });
    return this;
  }

  commit(requestId: string, unit: Unit, sIn: number, eIn: number, tailStart: number): this {
    this.emit('CompactionCommitted', {
      requestId,
      unit,
      summaryInput: { start: sIn, end: eIn },
      tailStart,
    });
    return this;
  }

  spilled(spillRequestId: string, unit: Unit, start: number, end: number): this {
    this.emit('SpillCompleted', {
      spillRequestId,
      handle: `s3://spills/${this.sessionId}/${spillRequestId}`,
      unit,
      range: { start, end },
    });
    return this;
  }

  spillFailed(spillRequestId: string, error = 'disk full'): this {
    this.emit('SpillFailed', { spillRequestId, error });
    return this;
  }

  acknowledge(
    unit: Unit,
    start: number,
    end: number,
    by = 'oncall@example.com',
    reason = 'accepted loss',
  ): this {
    this.emit('LossAcknowledged', { unit, range: { start, end }, by, reason });
    return this;
  }

  close(): this {
    this.emit('SessionClosed', {});
    return this;
  }

  /** Tokens and messages heads so far. */
  get heads(): { turns: number; tokens: number; messages: number } {
    return { turns: this.turnNo, tokens: this.tokens, messages: this.messages };
  }
}

/** The seed's worked example (contract §1): 8 turns truncated before the summary saw them. */
export function seedIncident(
  sessionId = 'seed-incident',
  policy: Policy = SEED_POLICY,
  t0?: number,
): SessionBuilder {
  const b = new SessionBuilder(sessionId, t0).open(policy);
  b.turn(1200, 'SYSTEM');
  b.turn(300, 'USER', ['CONSTRAINT']); // "never modify files under /etc"
  b.turn(800, 'ASSISTANT', ['PLAN']);
  for (let i = 0; i < 5; i++) b.turn(900, i % 2 ? 'USER' : 'ASSISTANT');
  for (let i = 0; i < 40; i++) b.turn(3600, i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL');
  b.truncate('TURNS', 0, 8);
  for (let i = 0; i < 4; i++) b.turn(500, i % 2 ? 'ASSISTANT' : 'USER');
  b.request('compact-1', 'TURNS', 8, 40, 40);
  return b;
}
