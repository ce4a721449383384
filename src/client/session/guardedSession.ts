/**
 * GuardedSession: one agent session as the guard sees it. Each call is one command: the ledger
 * (ledger.ts) decides the event it means and keeps the sequence and the positions, the outbox
 * (outbox.ts) hands the events to the client in call order, and a request's verdict is waited
 * for within its deadline (verdictWait.ts). This class only joins them, and runs the spill loop.
 */
import { randomUUID } from 'node:crypto';
import type { ContextEvent, Policy, Span, TruncationReason, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import { sleep } from '../../time';
import { SpillNotTrustedError, SpillStoreError } from '../errors';
import type { SpillStore } from '../spill';
import { failureText, transcriptPieces } from '../transcript';
import { requireDecodable } from '../validate';
import { storeVouched } from '../vouch';
import {
  type SpillAnswer,
  ignoredSpillAnswerMessage,
  spillAnswerIgnored,
  spillAnswerOf,
  verdictHoles,
} from '../spillAnswerCheck';
import { type SessionCommand, SessionLedger } from './ledger';
import type { SessionPort } from './port';
import { SessionOutbox } from './outbox';
import type {
  CommitReport,
  CompactionRequest,
  RequestOptions,
  SessionOptions,
  SessionSnapshot,
  TranscriptReader,
  TurnInput,
  TurnPosition,
} from './types';
import { VerdictWaiter } from './verdictWait';

/** How many times the in-band spill loop spills and asks again, by default. */
const MAX_SPILLS = 2;
const DEFAULT_SPILL_POLL_MS = 500;
const DEFAULT_SPILL_WAIT_MS = 30_000;

export class GuardedSession {
  private readonly ledger: SessionLedger;
  private readonly outbox: SessionOutbox;
  private readonly verdicts: VerdictWaiter;
  private readonly now: () => number;

  /** @internal use GuardClient.session / GuardClient.resume */
  constructor(
    private readonly client: SessionPort,
    readonly sessionId: string,
    snapshot: SessionSnapshot | null,
    options: SessionOptions = {},
  ) {
    this.ledger =
      snapshot === null ? SessionLedger.fresh(sessionId) : SessionLedger.resume(snapshot);
    this.now = options.now ?? Date.now;
    const persist = options.persist;
    this.outbox = new SessionOutbox(sessionId, {
      send: (event) => client.send(event),
      persist: persist ? () => persist(this.ledger.snapshot()) : null,
      acknowledged: (event) => this.ledger.acknowledged([event.eventId]),
    });
    this.verdicts = new VerdictWaiter(client, sessionId);
  }

  /** The next turn index. */
  get turns(): number {
    return this.ledger.turns;
  }

  /** The seq the next event will carry. */
  get seq(): number {
    return this.ledger.seq;
  }

  /** The end of the last turn in `unit` (contract §2: the head H). */
  head(unit: Unit): number {
    return this.ledger.head(unit);
  }

  /** A turn's range in all three units. */
  position(turn: number): TurnPosition {
    return this.ledger.position(turn);
  }

  /** Where `turn` starts in `unit` (the head when `turn` is the next one): a tailStart. */
  startOf(turn: number, unit: Unit): number {
    return this.ledger.startOf(turn, unit);
  }

  /** The session as it can be restored with `GuardClient.resume`. */
  snapshot(): SessionSnapshot {
    return this.ledger.snapshot();
  }

  /** SessionOpened (seq 0). */
  async open(policy: Policy): Promise<void> {
    await this.send({ type: 'open', policy });
  }

  /** TurnAppended at the head: the session computes the positions from the sizes. */
  async appendTurn(input: TurnInput): Promise<TurnPosition> {
    const event = await this.send({ ...input, type: 'appendTurn' });
    if (event.type !== 'TurnAppended') throw new Error(`appendTurn sent ${event.type}`);
    return { turn: event.turn, tokens: event.tokens, messages: event.messages };
  }

  /** Truncated: items left the context (contract §3); the range must lie within the head. */
  async truncated(t: { unit: Unit; range: Span; reason?: TruncationReason }): Promise<void> {
    await this.send({ ...t, type: 'truncated' });
  }

  /**
   * CompactionRequested, then the verdict. Rejects with GuardTimeoutError when none comes in
   * time: then do not compact (fail closed). With `options.spill`, a REFUSE with action SPILL is
   * answered by spilling and retrying, and the final verdict is returned.
   */
  async requestCompaction(req: CompactionRequest, options: RequestOptions = {}): Promise<Verdict> {
    const requestId = req.requestId ?? `req-${randomUUID()}`;
    const command = { ...req, type: 'requestCompaction', requestId } as const;
    const ask = async () => {
      const v = await this.ask(command, options.timeoutMs ?? this.client.verdictTimeoutMs);
      options.onVerdict?.(v);
      return v;
    };
    let verdict = await ask();
    const spill = options.spill;
    const maxSpills = spill?.maxSpills ?? MAX_SPILLS;
    for (let n = 0; spill && n < maxSpills && isSpillAsk(verdict); n++) {
      const answer = await this.spillAndAnswer(
        verdict.spillRequestId!,
        spill.store,
        spill.transcript,
      );
      verdict = await ask();
      if (isSpillAsk(verdict) && spillAnswerIgnored(answer, verdictHoles(verdict)))
        throw new SpillNotTrustedError(
          ignoredSpillAnswerMessage(this.sessionId, requestId, answer),
        );
    }
    if (options.awaitSpill && isSpillAsk(verdict)) {
      const pollMs = options.awaitSpill.pollMs ?? DEFAULT_SPILL_POLL_MS;
      const deadline = this.now() + (options.awaitSpill.timeoutMs ?? DEFAULT_SPILL_WAIT_MS);
      while (isSpillAsk(verdict) && this.now() + pollMs <= deadline) {
        await sleep(pollMs);
        verdict = await ask();
      }
    }
    return verdict;
  }

  /** CompactionCommitted: what the orchestrator actually committed (report it after an APPROVE). */
  async committed(c: CommitReport): Promise<void> {
    await this.send({ ...c, type: 'committed' });
  }

  /** SpillCompleted in band: `range` (in `unit`) is stored losslessly behind `handle`. */
  async spillCompleted(s: {
    spillRequestId: string;
    handle: string;
    unit: Unit;
    range: Span;
  }): Promise<void> {
    await this.send({ ...s, type: 'spillCompleted' });
  }

  /** SpillFailed in band: the spill asked for could not be written. */
  async spillFailed(s: { spillRequestId: string; error: string }): Promise<void> {
    await this.send({ ...s, type: 'spillFailed' });
  }

  /** LossAcknowledged in band: an operator accepts that `range` may be lost (contract §4). */
  async lossAcknowledged(a: {
    unit: Unit;
    range: Span;
    by: string;
    reason: string;
  }): Promise<void> {
    await this.send({ ...a, type: 'lossAcknowledged' });
  }

  /** SessionClosed; any later call is a GuardClosedError. */
  async close(): Promise<void> {
    await this.send({ type: 'close' });
  }

  /** @internal Sends the snapshot's unacknowledged events again, in order, same seq and eventId. */
  async resendPending(): Promise<void> {
    const events = [...this.ledger.pending];
    await Promise.all(events.map((e) => this.client.send(e)));
    this.ledger.acknowledged(events.map((e) => e.eventId));
  }

  /** One command's event, sent; resolves with it once the broker acknowledged it. */
  private send(command: SessionCommand): Promise<ContextEvent> {
    return this.outbox.submit(() => this.prepare(command));
  }

  /** One request, then its verdict within `timeoutMs` from now. */
  private ask(
    command: Extract<SessionCommand, { type: 'requestCompaction' }>,
    timeoutMs: number,
  ): Promise<Verdict> {
    const wait = this.verdicts.begin(command.requestId, timeoutMs);
    const sent = this.outbox.submit(() => {
      this.ledger.requireNotClosed();
      wait.requireTime(); // timed out while earlier events were queued: send nothing
      return this.prepare(command, (event) => {
        if (event.type === 'CompactionRequested') wait.register(event.eventId);
      });
    });
    return wait.outcome(sent);
  }

  /**
   * The command's event, stamped, signed (one of the three, with the client's key) and checked
   * as the processor will decode it, then recorded: a throw sends nothing and changes nothing.
   */
  private prepare(
    command: SessionCommand,
    beforeRecord?: (event: ContextEvent) => void,
  ): ContextEvent {
    const body = this.ledger.decide(command);
    const stamped = this.ledger.stamp(body, { eventId: randomUUID(), occurredAt: this.now() });
    const event = requireDecodable(this.client.signedInBand(stamped, this.ledger.lastOccurredAt));
    beforeRecord?.(event);
    this.ledger.record(event);
    return event;
  }

  /**
   * Spills and answers; resolves with the answer as sent. A store that cannot write answers
   * SpillFailed, then throws its SpillStoreError: the cause is the caller's to see, not the HALT.
   */
  private async spillAndAnswer(
    spillRequestId: string,
    store: SpillStore,
    transcript: TranscriptReader,
  ): Promise<SpillAnswer> {
    // The guard asks for [0, H') in the floor unit (contract §5): the whole transcript so far.
    // Reported is only what was stored and read back of it (contract §4b: storeVouched, as the
    // SpillWorker): the turns the reader gave, from the first on, without a hole
    // (test/unit/spill-vouch.test.ts, "the client's spill loop reports only what it stored").
    const { unit, range, firstTurn, endTurn } = this.ledger.spillRange();
    let stored: { handle: string; range: Span };
    try {
      const turns = { firstTurn, endTurn };
      const content = await transcript({ sessionId: this.sessionId, unit, ...range, ...turns });
      stored = await storeVouched(
        store,
        { sessionId: this.sessionId, spillRequestId, unit, range },
        transcriptPieces(content, turns, (turn) => this.ledger.position(turn)),
      );
    } catch (e) {
      const failed = await this.send({
        type: 'spillFailed',
        spillRequestId,
        error: failureText(e),
      });
      if (e instanceof SpillStoreError) throw e;
      return spillAnswerOf(failed)!;
    }
    const completed = { spillRequestId, handle: stored.handle, unit, range: stored.range };
    return spillAnswerOf(await this.send({ ...completed, type: 'spillCompleted' }))!;
  }
}

function isSpillAsk(v: Verdict): boolean {
  return v.decision === 'REFUSE' && v.action === 'SPILL' && v.spillRequestId !== null;
}
