/**
 * GuardedSession: one agent session as the guard sees it. It owns the sequence (contract §3:
 * seq 0 for SessionOpened, then +1 per event) and the positions: the caller gives each turn's
 * size and the session computes its range in all three units (contract §2: each turn starts
 * where the previous ended). Calls on one session are serialised, so seq order is call order.
 */
import { randomUUID } from 'node:crypto';
import type {
  Pin,
  Policy,
  Role,
  Span,
  TruncationReason,
  Unit,
  ContextEvent,
} from '../engine/events';
import type { Verdict } from '../engine/outputs';
import { decodeEventJson } from '../schema/decodeEvent';
import type { GuardClient } from './client';
import { GuardClosedError, GuardSendError, GuardTimeoutError, GuardUsageError } from './errors';
import type { SpillStore } from './spill';
import { requireRange, requireSize, requireTurn, requireUnit } from './validate';
import { type TranscriptContent, failureText, transcriptBytes } from './transcript';

/** A turn's place in every unit, as sent in its TurnAppended. */
export interface TurnPosition {
  turn: number;
  tokens: Span;
  messages: Span;
}

export interface TurnInput {
  role: Role;
  /** The turn's size in tokens (> 0), counted as the orchestrator counts its context. */
  tokens: number;
  /** Messages the turn holds (> 0); default 1. */
  messages?: number;
  /** What a summary must re-assert (contract §3). */
  pins?: Pin[];
}

export interface CompactionRequest {
  /** Default: a fresh id; the same id on a retry. */
  requestId?: string;
  /** Default: the policy's floor unit (contract §2: every check compares ranges in it). */
  unit?: Unit;
  /** The original positions the summary will account for (contract §3). */
  summaryInput: Span;
  /** First position kept verbatim. */
  tailStart: number;
  occupancyTokens?: number | null;
}

export interface CommitReport {
  requestId: string;
  unit?: Unit;
  summaryInput: Span;
  tailStart: number;
}

/** The part of the transcript a spill must store, in the unit asked and as whole turns. */
export interface TranscriptRange {
  sessionId: string;
  unit: Unit;
  start: number;
  end: number;
  /** The turns `[firstTurn, endTurn)` whose content covers `[start, end)`. */
  firstTurn: number;
  endTurn: number;
}

/**
 * The orchestrator's transcript: the exact bytes of a range of turns, or one entry per turn
 * (then the spill loop checks that every turn is there). A reader that cannot give every turn
 * must throw: the spill then fails (SpillFailed), and is never reported as stored.
 */
export type TranscriptReader = (
  range: TranscriptRange,
) => TranscriptContent | Promise<TranscriptContent>;

export interface RequestOptions {
  /** Wait for each verdict (ms); default the client's. */
  timeoutMs?: number;
  /**
   * In-band spill loop: on REFUSE with action SPILL, write the transcript to `store`, answer
   * SpillCompleted (SpillFailed if the write fails) and retry the same requestId, so the call
   * returns the final verdict.
   */
  spill?: { store: SpillStore; transcript: TranscriptReader; maxSpills?: number };
  /**
   * A separate spill worker answers out of band (SpillWorker): on REFUSE with action SPILL, ask
   * again every `pollMs` (default 500) until the verdict is no longer a spill ask or `timeoutMs`
   * (default 30 s) has passed; the last verdict is returned either way.
   */
  awaitSpill?: { pollMs?: number; timeoutMs?: number };
  /** Told every verdict as it comes, the spill loop's intermediate ones included (logs, metrics). */
  onVerdict?: (verdict: Verdict) => void;
}

export interface SessionSnapshot {
  version: 1;
  sessionId: string;
  nextSeq: number;
  policy: Policy | null;
  closed: boolean;
  /** The highest tailStart committed (in the floor unit), clipped to the head. */
  verbatimStart: number;
  /** Where each turn ends, per unit (turn i: `[ends[i-1] ?? 0, ends[i])`). */
  tokenEnds: number[];
  messageEnds: number[];
  /** Events handed to Kafka but not known to be acknowledged, in seq order. */
  pending: ContextEvent[];
}

export interface SessionOptions {
  /**
   * Called with the session's snapshot before each event is sent (the snapshot already lists
   * the event as pending). Persist it, and `GuardClient.resume` it after a crash: no gap, no
   * SEQ_CONFLICT. Without it, `snapshot()` is only safe when nothing is in flight.
   */
  persist?: (snapshot: SessionSnapshot) => void | Promise<void>;
  /** Event time for the events (default Date.now). */
  now?: () => number;
}

const MAX_SPILLS = 2;
/**
 * Most events of one session in flight (sent, not yet acknowledged). A resume sends them again,
 * and the processor recognises a resend only among the eventIds of the 32 highest seqs it
 * accepted (contract §4): with at most 16 in flight every resend is within that window.
 */
export const MAX_IN_FLIGHT = 16;

export class GuardedSession {
  private nextSeq = 0;
  private policy: Policy | null = null;
  private closed = false;
  private failed: Error | null = null;
  private verbatimStart = 0;
  private tokenEnds: number[] = [];
  private messageEnds: number[] = [];
  private pending: ContextEvent[] = [];
  /** Serialises calls: each runs after the previous one handed its event to the sender. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Per requestId with the same ranges, the seqs sent since the last non-request event. */
  private attempts = new Map<string, { ranges: string; seqs: number[] }>();
  private readonly now: () => number;
  /** Acknowledgements still to come, oldest first (at most MAX_IN_FLIGHT). */
  private inFlight: Promise<void>[] = [];
  /** requestIds whose verdict this session is waiting for. */
  private readonly waiting = new Set<string>();
  /** The latest occurredAt this session sent (a signature's validity starts no earlier). */
  private lastOccurredAt: number | null = null;

  /** @internal use GuardClient.session / GuardClient.resume */
  constructor(
    private readonly client: GuardClient,
    readonly sessionId: string,
    snapshot: SessionSnapshot | null,
    private readonly options: SessionOptions = {},
  ) {
    if (typeof sessionId !== 'string' || sessionId.length === 0)
      throw new GuardUsageError('sessionId', 'expected a non-empty string');
    this.now = options.now ?? Date.now;
    if (snapshot) {
      if (snapshot.version !== 1)
        throw new GuardUsageError(
          'snapshot.version',
          `expected 1, got ${String(snapshot.version)}`,
        );
      this.nextSeq = snapshot.nextSeq;
      this.policy = snapshot.policy;
      this.closed = snapshot.closed;
      this.verbatimStart = snapshot.verbatimStart;
      this.tokenEnds = [...snapshot.tokenEnds];
      this.messageEnds = [...snapshot.messageEnds];
      this.pending = [...snapshot.pending];
      for (const e of this.pending)
        this.lastOccurredAt = Math.max(this.lastOccurredAt ?? e.occurredAt, e.occurredAt);
    }
  }

  /** The next turn index. */
  get turns(): number {
    return this.tokenEnds.length;
  }

  /** The seq the next event will carry. */
  get seq(): number {
    return this.nextSeq;
  }

  /** The end of the last turn in `unit` (contract §2: the head H). */
  head(unit: Unit): number {
    if (unit === 'TURNS') return this.tokenEnds.length;
    const ends = unit === 'TOKENS' ? this.tokenEnds : this.messageEnds;
    return ends[ends.length - 1] ?? 0;
  }

  /** A turn's range in all three units. */
  position(turn: number): TurnPosition {
    requireTurn('turn', turn, this.turns);
    return {
      turn,
      tokens: { start: this.tokenEnds[turn - 1] ?? 0, end: this.tokenEnds[turn]! },
      messages: { start: this.messageEnds[turn - 1] ?? 0, end: this.messageEnds[turn]! },
    };
  }

  /** Where `turn` starts in `unit` (the head when `turn` is the next one): a tailStart. */
  startOf(turn: number, unit: Unit): number {
    if (turn === this.turns) return this.head(unit);
    if (unit === 'TURNS') return this.position(turn).turn;
    const p = this.position(turn);
    return unit === 'TOKENS' ? p.tokens.start : p.messages.start;
  }

  /** The session as it can be restored with `GuardClient.resume`. */
  snapshot(): SessionSnapshot {
    return {
      version: 1,
      sessionId: this.sessionId,
      nextSeq: this.nextSeq,
      policy: this.policy,
      closed: this.closed,
      verbatimStart: this.verbatimStart,
      tokenEnds: [...this.tokenEnds],
      messageEnds: [...this.messageEnds],
      pending: [...this.pending],
    };
  }

  /** SessionOpened (seq 0). */
  open(policy: Policy): Promise<void> {
    return this.call(() => {
      if (this.policy !== null || this.nextSeq > 0)
        throw new GuardUsageError('open', 'the session is already open');
      this.policy = policy;
      return { type: 'SessionOpened', policy };
    });
  }

  /** TurnAppended at the head: the session computes the positions from the sizes. */
  appendTurn(input: TurnInput): Promise<TurnPosition> {
    let position!: TurnPosition;
    return this.call(
      () => {
        this.requirePolicy('appendTurn');
        requireSize('tokens', input.tokens);
        const messages = input.messages ?? 1;
        requireSize('messages', messages);
        const turn = this.turns;
        const tokens = { start: this.head('TOKENS'), end: this.head('TOKENS') + input.tokens };
        const msgs = { start: this.head('MESSAGES'), end: this.head('MESSAGES') + messages };
        position = { turn, tokens, messages: msgs };
        return {
          type: 'TurnAppended',
          turn,
          tokens,
          messages: msgs,
          role: input.role,
          pins: input.pins ?? [],
        };
      },
      () => {
        this.tokenEnds.push(position.tokens.end);
        this.messageEnds.push(position.messages.end);
      },
    ).then(() => position);
  }

  /** Truncated: items left the context (contract §3); the range must lie within the head. */
  truncated(t: { unit: Unit; range: Span; reason?: TruncationReason }): Promise<void> {
    return this.call(() => {
      this.requirePolicy('truncated');
      requireUnit('unit', t.unit);
      requireRange('range', t.range, this.head(t.unit));
      return {
        type: 'Truncated',
        unit: t.unit,
        range: t.range,
        reason: t.reason ?? 'BUDGET_ENFORCEMENT',
      };
    });
  }

  /**
   * CompactionRequested, then the verdict. Rejects with GuardTimeoutError when none comes in
   * time: then do not compact (fail closed). With `options.spill`, a REFUSE with action SPILL is
   * answered by spilling and retrying, and the final verdict is returned.
   */
  async requestCompaction(req: CompactionRequest, options: RequestOptions = {}): Promise<Verdict> {
    const request = { ...req, requestId: req.requestId ?? `req-${randomUUID()}` };
    const ask = async () => {
      const v = await this.attempt(request, options.timeoutMs);
      options.onVerdict?.(v);
      return v;
    };
    let verdict = await ask();
    const spill = options.spill;
    const maxSpills = spill?.maxSpills ?? MAX_SPILLS;
    for (let n = 0; spill && n < maxSpills && isSpillAsk(verdict); n++) {
      await this.spillAndAnswer(verdict.spillRequestId!, spill.store, spill.transcript);
      verdict = await ask();
    }
    if (options.awaitSpill && isSpillAsk(verdict)) {
      const { pollMs = 500, timeoutMs = 30_000 } = options.awaitSpill;
      const deadline = Date.now() + timeoutMs;
      while (isSpillAsk(verdict) && Date.now() + pollMs <= deadline) {
        await new Promise((r) => setTimeout(r, pollMs));
        verdict = await ask();
      }
    }
    return verdict;
  }

  /** CompactionCommitted: what the orchestrator actually committed (report it after an APPROVE). */
  committed(c: CommitReport): Promise<void> {
    return this.call(
      () => {
        const unit = this.requestUnit(c.unit, 'committed');
        requireId('requestId', c.requestId);
        this.requireRequestRanges(unit, c.summaryInput, c.tailStart);
        return {
          type: 'CompactionCommitted',
          requestId: c.requestId,
          unit,
          summaryInput: c.summaryInput,
          tailStart: c.tailStart,
        };
      },
      () => {
        const unit = c.unit ?? this.policy!.floor.unit;
        if (unit === this.policy!.floor.unit)
          this.verbatimStart = Math.max(this.verbatimStart, Math.min(c.tailStart, this.head(unit)));
      },
    );
  }

  /** SpillCompleted in band: `range` (in `unit`) is stored losslessly behind `handle`. */
  spillCompleted(s: {
    spillRequestId: string;
    handle: string;
    unit: Unit;
    range: Span;
  }): Promise<void> {
    return this.call(() => {
      requireId('spillRequestId', s.spillRequestId);
      requireUnit('unit', s.unit);
      requireRange('range', s.range, Number.MAX_SAFE_INTEGER);
      return {
        type: 'SpillCompleted',
        spillRequestId: s.spillRequestId,
        handle: s.handle,
        unit: s.unit,
        range: s.range,
      };
    });
  }

  /** SpillFailed in band: the spill asked for could not be written. */
  spillFailed(s: { spillRequestId: string; error: string }): Promise<void> {
    return this.call(() => {
      requireId('spillRequestId', s.spillRequestId);
      return { type: 'SpillFailed', spillRequestId: s.spillRequestId, error: s.error };
    });
  }

  /** LossAcknowledged in band: an operator accepts that `range` may be lost (contract §4). */
  lossAcknowledged(a: { unit: Unit; range: Span; by: string; reason: string }): Promise<void> {
    return this.call(() => {
      requireUnit('unit', a.unit);
      requireRange('range', a.range, Number.MAX_SAFE_INTEGER);
      return { type: 'LossAcknowledged', unit: a.unit, range: a.range, by: a.by, reason: a.reason };
    });
  }

  /** SessionClosed; any later call is a GuardClosedError. */
  close(): Promise<void> {
    return this.call(
      () => ({ type: 'SessionClosed' }),
      () => {
        this.closed = true;
      },
    );
  }

  /** @internal Sends the snapshot's unacknowledged events again, in order, same seq and eventId. */
  async resendPending(): Promise<void> {
    const events = [...this.pending];
    await Promise.all(events.map((e) => this.client.send(e)));
    this.pending = this.pending.filter((p) => !events.includes(p));
  }

  private async spillAndAnswer(
    spillRequestId: string,
    store: SpillStore,
    transcript: TranscriptReader,
  ): Promise<void> {
    // The guard asks for [0, H') in the floor unit (contract §5): the whole transcript so far.
    const unit = this.policy!.floor.unit;
    const range = { start: 0, end: this.head(unit) };
    let handle: string;
    try {
      const turns = { firstTurn: 0, endTurn: this.turns };
      const content = await transcript({ sessionId: this.sessionId, unit, ...range, ...turns });
      handle = await store.write({
        sessionId: this.sessionId,
        spillRequestId,
        unit,
        range,
        content: transcriptBytes(content, turns),
      });
    } catch (e) {
      await this.spillFailed({ spillRequestId, error: failureText(e) });
      return;
    }
    await this.spillCompleted({ spillRequestId, handle, unit, range });
  }

  private async attempt(
    request: CompactionRequest & { requestId: string },
    timeoutMs = this.client.verdictTimeoutMs,
  ): Promise<Verdict> {
    let verdict!: Promise<Verdict>;
    let registered = false;
    let timedOut = false;
    const sent = this.call(
      () => {
        // Timed out while earlier calls of the session were still queued: send nothing.
        if (timedOut) throw new GuardTimeoutError(this.sessionId, request.requestId, timeoutMs);
        const unit = this.requestUnit(request.unit, 'requestCompaction');
        requireId('requestId', request.requestId);
        this.requireRequestRanges(unit, request.summaryInput, request.tailStart);
        if (request.occupancyTokens != null)
          requireSize('occupancyTokens', request.occupancyTokens, 0);
        if (this.waiting.has(request.requestId))
          throw new GuardUsageError(
            'requestId',
            `${JSON.stringify(request.requestId)} is already waiting for its verdict`,
          );
        const ranges = JSON.stringify([unit, request.summaryInput, request.tailStart]);
        const previous = this.attempts.get(request.requestId);
        const seqs =
          previous?.ranges === ranges ? [...previous.seqs, this.nextSeq] : [this.nextSeq];
        verdict = this.client.expectVerdict(this.sessionId, request.requestId, seqs);
        verdict.catch(() => undefined); // awaited below; a close() may reject it before that
        this.waiting.add(request.requestId);
        registered = true;
        this.attempts.set(request.requestId, { ranges, seqs });
        return {
          type: 'CompactionRequested',
          requestId: request.requestId,
          unit,
          summaryInput: { start: request.summaryInput.start, end: request.summaryInput.end },
          tailStart: request.tailStart,
          occupancyTokens: request.occupancyTokens ?? null,
        };
      },
      undefined,
      true,
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        if (registered) this.client.forgetVerdict(this.sessionId, request.requestId);
        reject(new GuardTimeoutError(this.sessionId, request.requestId, timeoutMs));
      }, timeoutMs);
    });
    try {
      await Promise.race([sent, timeout]);
      return await Promise.race([verdict, timeout]);
    } catch (e) {
      if (registered) this.client.forgetVerdict(this.sessionId, request.requestId);
      throw e;
    } finally {
      if (registered) this.waiting.delete(request.requestId);
      clearTimeout(timer);
    }
  }

  /**
   * One event: `build` validates and returns it (a throw sends nothing and leaves the session as
   * it was), `apply` updates the session once the event is accepted for sending. Resolves when
   * the broker acknowledged the event.
   */
  private call(build: () => EventBody, apply?: () => void, isRequest = false): Promise<void> {
    const run = this.chain.then(async () => {
      while (this.inFlight.length >= MAX_IN_FLIGHT) await this.inFlight[0]!.catch(() => undefined);
      if (this.failed)
        throw new GuardSendError(
          `session ${this.sessionId}: an earlier send failed (${this.failed.message}); resume it from its snapshot`,
        );
      if (this.closed) throw new GuardClosedError(`session ${this.sessionId} is closed`);
      const body = build();
      const event = this.client.signedInBand(
        {
          ...body,
          sessionId: this.sessionId,
          seq: this.nextSeq,
          eventId: randomUUID(),
          occurredAt: this.now(),
        } as ContextEvent,
        this.lastOccurredAt,
      );
      const checked = decodeEventJson(event);
      if (!checked.ok)
        throw new GuardUsageError(checked.error.field ?? event.type, checked.error.message);
      this.nextSeq++;
      this.lastOccurredAt = Math.max(this.lastOccurredAt ?? event.occurredAt, event.occurredAt);
      apply?.();
      if (!isRequest) this.attempts.clear();
      this.pending.push(event);
      try {
        if (this.options.persist) await this.options.persist(this.snapshot());
      } catch (e) {
        // Counted but neither persisted nor sent: only a resume from the last snapshot is safe.
        this.failed = e as Error;
        throw e;
      }
      const ack = this.client.send(event).then(
        () => {
          this.pending = this.pending.filter((p) => p !== event);
        },
        (e: Error) => {
          this.failed = e;
          throw new GuardSendError(`session ${this.sessionId} seq ${event.seq}: ${e.message}`, {
            cause: e,
          });
        },
      );
      this.inFlight.push(ack);
      void ack
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          this.inFlight = this.inFlight.filter((a) => a !== ack);
        });
      return { ack };
    });
    // The next call waits only until this one's event is queued, not for its acknowledgement.
    this.chain = run.catch(() => undefined);
    return run.then(({ ack }) => ack);
  }

  private requirePolicy(what: string): void {
    if (this.policy === null)
      throw new GuardUsageError(what, 'the session is not open: call open(policy) first');
  }

  private requestUnit(unit: Unit | undefined, what: string): Unit {
    this.requirePolicy(what);
    const u = unit ?? this.policy!.floor.unit;
    requireUnit('unit', u);
    return u;
  }

  /** 0 ≤ sIn ≤ eIn ≤ head and V ≤ t ≤ head (contract §5 INVALID_REQUEST, caught before sending). */
  private requireRequestRanges(unit: Unit, summaryInput: Span, tailStart: number): void {
    const head = this.head(unit);
    requireRange('summaryInput', summaryInput, head);
    if (!Number.isSafeInteger(tailStart) || tailStart < 0)
      throw new GuardUsageError('tailStart', `expected an integer ≥ 0, got ${String(tailStart)}`);
    if (tailStart > head)
      throw new GuardUsageError(
        'tailStart',
        `${tailStart} lies beyond the head (${head} ${unit}): the tail must start within what was appended`,
      );
    if (unit === this.policy!.floor.unit && tailStart < this.verbatimStart)
      throw new GuardUsageError(
        'tailStart',
        `${tailStart} is below the verbatim start ${this.verbatimStart} (${unit}): those positions were compacted already`,
      );
  }
}

type EventBody = { type: ContextEvent['type'] } & Record<string, unknown>;

function isSpillAsk(v: Verdict): boolean {
  return v.decision === 'REFUSE' && v.action === 'SPILL' && v.spillRequestId !== null;
}

function requireId(field: string, id: unknown): void {
  if (typeof id !== 'string' || id.length === 0)
    throw new GuardUsageError(field, `expected a non-empty string, got ${JSON.stringify(id)}`);
}
