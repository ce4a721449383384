/**
 * SessionLedger: what the client knows of one session, and the rules for its next event. Pure
 * (no clock, no ids, no I/O): `decide` turns a command into the event body it means, or refuses
 * it (GuardUsageError, GuardClosedError: nothing is sent); `stamp` puts the body in its
 * envelope at the next seq; `record` applies the event once it is handed over for sending.
 *
 * It owns the sequence (contract §3: seq 0 for SessionOpened, then +1 per event), the
 * positions (contract §2: the caller gives each turn's size, each turn starts where the
 * previous ended, in all three units), the events not yet acknowledged (a resume sends them
 * again under the same seq and eventId).
 */
import type { ContextEvent, Policy, Span, TruncationReason, Unit } from '../../engine/events';
import { unreachable } from '../../engine/unreachable';
import {
  type EventBody,
  compactionCommitted,
  compactionRequested,
  inBand,
  lossAcknowledged,
  sessionClosed,
  sessionOpened,
  spillCompleted,
  spillFailed,
  truncated,
  turnAppended,
} from '../events';
import { GuardClosedError, GuardUsageError } from '../errors';
import { requireRange, requireSize, requireTurn, requireUnit } from '../validate';
import type {
  CommitReport,
  CompactionRequest,
  SessionSnapshot,
  TurnInput,
  TurnPosition,
} from './types';

/** What the caller asks of the session; each is one event, or a refusal. */
export type SessionCommand =
  | { type: 'open'; policy: Policy }
  | ({ type: 'appendTurn' } & TurnInput)
  | { type: 'truncated'; unit: Unit; range: Span; reason?: TruncationReason }
  | ({ type: 'requestCompaction'; requestId: string } & Omit<CompactionRequest, 'requestId'>)
  | ({ type: 'committed' } & CommitReport)
  | { type: 'spillCompleted'; spillRequestId: string; handle: string; unit: Unit; range: Span }
  | { type: 'spillFailed'; spillRequestId: string; error: string }
  | { type: 'lossAcknowledged'; unit: Unit; range: Span; by: string; reason: string }
  | { type: 'close' };

/** A requestId's sends since the last event that was not a request, with the ranges they asked. */

export class SessionLedger {
  private nextSeq = 0;
  private openPolicy: Policy | null = null;
  private isClosed = false;
  private verbatimStart = 0;
  private tokenEnds: number[] = [];
  private messageEnds: number[] = [];
  private unacknowledged: ContextEvent[] = [];
  private latest: number | null = null;

  private constructor(readonly sessionId: string) {}

  /** A session nothing was sent for yet. */
  static fresh(sessionId: string): SessionLedger {
    if (typeof sessionId !== 'string' || sessionId.length === 0)
      throw new GuardUsageError('sessionId', 'expected a non-empty string');
    return new SessionLedger(sessionId);
  }

  /** The session as a snapshot left it (its unacknowledged events still to be sent again). */
  static resume(snapshot: SessionSnapshot): SessionLedger {
    const ledger = SessionLedger.fresh(snapshot.sessionId);
    if (snapshot.version !== 1)
      throw new GuardUsageError('snapshot.version', `expected 1, got ${String(snapshot.version)}`);
    ledger.nextSeq = snapshot.nextSeq;
    ledger.openPolicy = snapshot.policy;
    ledger.isClosed = snapshot.closed;
    ledger.verbatimStart = snapshot.verbatimStart;
    ledger.tokenEnds = [...snapshot.tokenEnds];
    ledger.messageEnds = [...snapshot.messageEnds];
    ledger.unacknowledged = [...snapshot.pending];
    for (const e of snapshot.pending)
      ledger.latest = Math.max(ledger.latest ?? e.occurredAt, e.occurredAt);
    return ledger;
  }

  /** The seq the next event will carry. */
  get seq(): number {
    return this.nextSeq;
  }

  /** The next turn index. */
  get turns(): number {
    return this.tokenEnds.length;
  }

  get policy(): Policy | null {
    return this.openPolicy;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The latest occurredAt sent (a signature's validity starts no earlier). */
  get lastOccurredAt(): number | null {
    return this.latest;
  }

  /** Events handed over for sending and not acknowledged yet, in seq order. */
  get pending(): readonly ContextEvent[] {
    return this.unacknowledged;
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

  /** What a spill asked now must store (contract §5): `[0, H')` in the floor unit, every turn. */
  spillRange(): { unit: Unit; range: Span; firstTurn: number; endTurn: number } {
    const unit = this.requirePolicy('spill').floor.unit;
    return { unit, range: { start: 0, end: this.head(unit) }, firstTurn: 0, endTurn: this.turns };
  }

  snapshot(): SessionSnapshot {
    return {
      version: 1,
      sessionId: this.sessionId,
      nextSeq: this.nextSeq,
      policy: this.openPolicy,
      closed: this.isClosed,
      verbatimStart: this.verbatimStart,
      tokenEnds: [...this.tokenEnds],
      messageEnds: [...this.messageEnds],
      pending: [...this.unacknowledged],
    };
  }

  /** After `close()` no command is taken. */
  requireNotClosed(): void {
    if (this.isClosed) throw new GuardClosedError(`session ${this.sessionId} is closed`);
  }

  /** The event body `command` means here, or a refusal (nothing changes either way). */
  decide(command: SessionCommand): EventBody {
    this.requireNotClosed();
    switch (command.type) {
      case 'open':
        if (this.openPolicy !== null || this.nextSeq > 0)
          throw new GuardUsageError('open', 'the session is already open');
        return sessionOpened(command.policy);
      case 'appendTurn':
        return this.nextTurn(command);
      case 'truncated':
        this.requirePolicy('truncated');
        requireUnit('unit', command.unit);
        requireRange('range', command.range, this.head(command.unit));
        return truncated(command.unit, command.range, command.reason ?? 'BUDGET_ENFORCEMENT');
      case 'requestCompaction': {
        const unit = this.requestUnit(command.unit, 'requestCompaction');
        requireId('requestId', command.requestId);
        this.requireRequestRanges(unit, command.summaryInput, command.tailStart);
        if (command.occupancyTokens != null)
          requireSize('occupancyTokens', command.occupancyTokens, 0);
        return compactionRequested({
          requestId: command.requestId,
          unit,
          summaryInput: { start: command.summaryInput.start, end: command.summaryInput.end },
          tailStart: command.tailStart,
          occupancyTokens: command.occupancyTokens ?? null,
        });
      }
      case 'committed': {
        const unit = this.requestUnit(command.unit, 'committed');
        requireId('requestId', command.requestId);
        this.requireRequestRanges(unit, command.summaryInput, command.tailStart);
        return compactionCommitted({
          requestId: command.requestId,
          unit,
          summaryInput: command.summaryInput,
          tailStart: command.tailStart,
        });
      }
      case 'spillCompleted':
        requireId('spillRequestId', command.spillRequestId);
        requireAnyRange(command.unit, command.range);
        return spillCompleted({
          spillRequestId: command.spillRequestId,
          handle: command.handle,
          unit: command.unit,
          range: command.range,
        });
      case 'spillFailed':
        requireId('spillRequestId', command.spillRequestId);
        return spillFailed({ spillRequestId: command.spillRequestId, error: command.error });
      case 'lossAcknowledged':
        requireAnyRange(command.unit, command.range);
        return lossAcknowledged({
          unit: command.unit,
          range: command.range,
          by: command.by,
          reason: command.reason,
        });
      case 'close':
        return sessionClosed();
    }
  }

  /** The body as the session's next event. */
  stamp(body: EventBody, id: { eventId: string; occurredAt: number }): ContextEvent {
    return inBand(body, { sessionId: this.sessionId, seq: this.nextSeq, ...id });
  }

  /** An in-band event was handed over for sending: the sequence and the positions move on. */
  record(event: ContextEvent): void {
    switch (event.type) {
      case 'SessionOpened':
        this.openPolicy = event.policy;
        break;
      case 'TurnAppended':
        this.tokenEnds.push(event.tokens.end);
        this.messageEnds.push(event.messages.end);
        break;
      case 'CompactionCommitted':
        if (event.unit === this.openPolicy?.floor.unit)
          this.verbatimStart = Math.max(
            this.verbatimStart,
            Math.min(event.tailStart, this.head(event.unit)),
          );
        break;
      case 'SessionClosed':
        this.isClosed = true;
        break;
      case 'Truncated':
      case 'CompactionRequested':
      case 'SpillCompleted':
      case 'SpillFailed':
      case 'LossAcknowledged':
        break;
      default:
        unreachable(event);
    }
    if (event.seq !== null) this.nextSeq = event.seq + 1;
    this.latest = Math.max(this.latest ?? event.occurredAt, event.occurredAt);
    this.unacknowledged.push(event);
  }

  /** The broker acknowledged these events: a resume need not send them again. */
  acknowledged(eventIds: readonly string[]): void {
    const done = new Set(eventIds);
    this.unacknowledged = this.unacknowledged.filter((e) => !done.has(e.eventId));
  }

  private nextTurn(input: TurnInput): EventBody {
    this.requirePolicy('appendTurn');
    requireSize('tokens', input.tokens);
    const messages = input.messages ?? 1;
    requireSize('messages', messages);
    const tokensAt = this.head('TOKENS');
    const messagesAt = this.head('MESSAGES');
    return turnAppended({
      turn: this.turns,
      tokens: { start: tokensAt, end: tokensAt + input.tokens },
      messages: { start: messagesAt, end: messagesAt + messages },
      role: input.role,
      pins: input.pins ?? [],
    });
  }

  private requirePolicy(what: string): Policy {
    if (this.openPolicy === null)
      throw new GuardUsageError(what, 'the session is not open: call open(policy) first');
    return this.openPolicy;
  }

  private requestUnit(unit: Unit | undefined, what: string): Unit {
    const policy = this.requirePolicy(what);
    const u = unit ?? policy.floor.unit;
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
    if (unit === this.openPolicy!.floor.unit && tailStart < this.verbatimStart)
      throw new GuardUsageError(
        'tailStart',
        `${tailStart} is below the verbatim start ${this.verbatimStart} (${unit}): those positions were compacted already`,
      );
  }
}

/** A range in a unit, not bounded by the head (a spill or a write-off may reach past it). */
function requireAnyRange(unit: Unit, range: Span): void {
  requireUnit('unit', unit);
  requireRange('range', range, Number.MAX_SAFE_INTEGER);
}

function requireId(field: string, id: unknown): void {
  if (typeof id !== 'string' || id.length === 0)
    throw new GuardUsageError(field, `expected a non-empty string, got ${JSON.stringify(id)}`);
}
