/**
 * One fetched batch as a plan, without Kafka: each record decoded, then through the engine on
 * the batch's own copy of its session, and what the batch's transaction must write: outputs,
 * dead letters and changelog records by topic. The committed states are only read: the batch
 * changes its own copies (made on first touch), so a transaction that fails leaves them intact,
 * and the caller applies `overlay` only once the transaction committed.
 *
 * Containment per record (contract §8, docs/decisions.md 119): whatever the processor's own code
 * throws on one record (reading the session's state, the engine, the output encoder, the state
 * serializer), or an output too large for its topic, dead-letters that record with a code naming
 * the stage, leaves its session's state exactly as before it (each record steps a copy, kept
 * only if every stage passed), and answers a CompactionRequested anyway (REFUSE,
 * INVALID_REQUEST, HALT, as a malformed request is answered). Nothing but an outage holds a
 * batch: `decodeForBatch` waits only for an unreachable registry.
 *
 * `decodeForBatch` is the only asynchronous part (an Avro record may need its writer's schema
 * from the registry); a `BatchPlanner` takes the decoded records one by one (so that a batch's
 * decoded events do not all live at once) and is synchronous and deterministic given its clocks.
 */
import type { Message } from './kafkajs';
import type { Config } from '../config/config';
import type { Output } from '../engine/collector';
import { refuseMalformed } from '../engine/decide';
import type { CompactionRequested } from '../engine/events';
import type { EngineInput, EngineOptions, StepResult } from '../engine/evolve';
import { evolveInPlace } from '../engine/step';
import { authorityOf } from '../engine/authorize';
import { serializeState } from '../engine/serialize';
import { blindState, cloneState, type SessionState } from '../engine/state';
import { RegistryUnavailableError, type RegistryCodec } from '../registry/codec';
import { atCapacityVerdict, type SessionCapacity } from './capacity';
import {
  encodePosition,
  positionKey,
  refusedChunkKey,
  stampHeaders,
  stateKey,
} from './changelogKeys';
import { deadLetter } from './deadLetters';
import { estimatedBytes } from './outputChunks';
import { EventTally } from './processorObserver';
import { DEFAULT_MAX_MESSAGE_BYTES, fits } from './recordLimits';
import {
  decodeRecord,
  decodeRecordNow,
  outputMessage,
  type DeadLetterCode,
  type DecodedRecord,
  type InputRoute,
  type RawRecord,
} from './records';
import { RefusedFilterView, type RefusedFilter } from './refusedFilter';
import { stampAfter, type Stamp } from './sessionStates';
import { BeforeTransactionError } from './transaction';

/** The settings a batch's plan reads. */
export type StepConfig = Pick<
  Config,
  'inputFormat' | 'verdictTopic' | 'spillTopic' | 'auditTopic' | 'dlqTopic' | 'changelogTopic'
>;

/** What encodes the engine's outputs (the registry codec, once its schemas are registered). */
export type OutputEncoder = Pick<
  RegistryCodec,
  'encodeVerdict' | 'encodeSpillRequest' | 'encodeAudit'
>;

/** The committed state of the partition's sessions, as the step reads it. */
export interface CommittedStates {
  has(sessionId: string): boolean;
  /** A copy the caller may change in place, or undefined for an unknown session. */
  owned(sessionId: string): SessionState | undefined;
  /** When the session's SessionClosed was processed (sessionStates.ts); null: open or unknown. */
  closedSince?(sessionId: string): number | null;
}

/** Why a record is dead-lettered although it decoded: the stage that failed on it. */
export interface Failure {
  code: DeadLetterCode;
  message: string;
}

/**
 * What earlier plans of a batch learned: sessions whose state could not be written at the end
 * of the batch, to be serialized after each of their records, so that the record that made it
 * so is found and dead-lettered.
 */
export class PlanLessons {
  readonly careful = new Set<string>();
}

export interface StepContext {
  config: StepConfig;
  encoder: OutputEncoder;
  engine: EngineOptions;
  committed: CommittedStates;
  /** Wall clock (ms): a verdict's decidedAt. */
  clock: () => number;
  /** Monotonic clock (ms) for the engine's time; `performance.now` in the processor. */
  timer: () => number;
  /**
   * Called once the records are through the engine, before the changelog records are made: may
   * add sessions to free (null) to the overlay (the processor's sweep of expired sessions).
   */
  sweep?: (overlay: Map<string, SessionState | null>) => void;
  /** The engine step (`evolveInPlace`); a test may give one that throws. */
  step?: (
    s: SessionState | undefined,
    e: EngineInput,
    decidedAt: number,
    o: EngineOptions,
  ) => StepResult;
  /** The state serializer (`serializeState`); a test may give one that throws. */
  serialize?: (s: SessionState) => Buffer;
  /** The largest record each topic takes (recordLimits.ts); default: Kafka's default. */
  limitOf?: (topic: string) => number;
  /** The instance's session cap (capacity.ts); none: no cap. */
  capacity?: SessionCapacity;
  /** The partition's sessions refused at capacity; none: not kept. */
  refused?: RefusedFilter;
  lessons?: PlanLessons;
  /**
   * What one transaction may take (docs/decisions.md 162); none: the whole batch. `planBatch`
   * stops adding records once either is reached (after at least one record).
   */
  budget?: TransactionBudget;
}

/** The work of one transaction: planning time and the estimated bytes it writes. */
export interface TransactionBudget {
  /** Milliseconds of planning (by `timer`). */
  ms: number;
  /** Estimated bytes of its records: outputs and dead letters, plus `STATE_ESTIMATE_BYTES` per session reached. */
  bytes: number;
}

/**
 * What a session's changelog record is reckoned at before it is serialized (at the end of the
 * plan): a typical state is ~0.5 KB serialized (bench/README.md), one at every bound up to 29 KB.
 */
export const STATE_ESTIMATE_BYTES = 1024;

export interface DeadLetterNote {
  code: DeadLetterCode;
  offset: string;
  message: string;
}

export interface AtCapacity {
  /** Events of sessions not held, not stored because the instance was at its cap. */
  events: number;
  /** Of their sessions, those not refused before (new to the refused filter). */
  sessions: number;
}

export interface BatchPlan {
  /** What the transaction writes, by topic: outputs and dead letters in record order, then the changelog. */
  sends: Map<string, Message[]>;
  /** Each touched session's state after the batch; null: freed (its changelog record is a tombstone). */
  overlay: Map<string, SessionState | null>;
  /** Each touched session's stamp (processing time: the plan's), as its changelog record's headers hold it. */
  stamps: Map<string, Stamp>;
  /** The engine's outputs, in order (reported once committed). */
  delivered: Output[];
  deadLetters: DeadLetterNote[];
  tally: EventTally;
  /** Engine steps (events through `evolveInPlace`) and their total time in ms. */
  steps: number;
  engineMs: number;
  /** Records in `sends`. */
  records: number;
  atCapacity: AtCapacity;
  /** Slots of the session capacity the plan reserved (given back by the caller, `release`). */
  reserved: number;
  /** The refused filter's chunks as the plan changed them: installed once committed. */
  refused: RefusedFilterView | null;
  /** Input records the plan took (a prefix of those it was given), and the offset after them. */
  taken: number;
  nextOffset: string;
}

/**
 * One record decoded: at once for JSON (no promise per record: it needs no registry), through
 * the registry for Avro; with `route`, a record not on the partition its key maps to is a
 * WRONG_PARTITION dead letter before its value is read. Throws (rejects with) BeforeTransactionError only when the record
 * cannot be decoded yet (the registry is unreachable): nothing of the batch was sent, reading it
 * again is exact. Anything else the decoding throws is the record's: a DECODER_FAILED dead
 * letter (a throw taken for an outage would hold the partition for good).
 */
export function decodeForBatch(
  m: RawRecord,
  format: StepConfig['inputFormat'],
  codec: RegistryCodec,
  route?: InputRoute,
): DecodedRecord | Promise<DecodedRecord> {
  let now: DecodedRecord | undefined;
  try {
    now = decodeRecordNow(m, format, route);
  } catch (e) {
    return decoderThrew(e);
  }
  return now ?? decodeRecord(m, format, codec, route).catch(decoderThrew);
}

function decoderThrew(e: unknown): DecodedRecord {
  if (e instanceof RegistryUnavailableError) throw new BeforeTransactionError(e);
  return {
    ok: false,
    code: 'DECODER_FAILED',
    message: `the decoder failed on this record (a compaction-guard bug; please report it with the record): ${describe(e)}`,
    answer: null,
  };
}

const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/**
 * The records at or after `position`, the offset after the last input record the committed
 * state includes (null: not known, all of them). kafkajs 2.2.4 can hand out a fetch answered
 * late by a partition's former leader (a broker paused, then resumed after the leadership
 * moved) as a new batch of records already processed and committed: seen on a 3-node cluster
 * after SIGSTOP/SIGCONT of a leader, one batch committed twice.
 */
export function unprocessedRecords<M extends { offset: string }>(
  messages: readonly M[],
  position: bigint | null,
): readonly M[] {
  if (position === null) return messages;
  const first = messages[0];
  if (first === undefined || BigInt(first.offset) >= position) return messages;
  return messages.filter((m) => BigInt(m.offset) >= position);
}

/** States that could not be serialized (or not within the changelog's record limit) at the end of a plan. */
export class UnserializableStates extends Error {
  constructor(readonly sessionIds: string[]) {
    super(`the state of ${sessionIds.length} session(s) could not be serialized`);
    this.name = 'UnserializableStates';
  }
}

type Placed = { topic: string; message: Message };

/** A batch's plan, record by record: `add` each decoded record in order, then `finish`. */
export class BatchPlanner {
  private readonly overlay = new Map<string, SessionState | null>();
  private readonly sends = new Map<string, Message[]>();
  private readonly delivered: Output[] = [];
  private readonly deadLetters: DeadLetterNote[] = [];
  private readonly tally = new EventTally();
  private readonly atCapacity: AtCapacity = { events: 0, sessions: 0 };
  private readonly refused: RefusedFilterView | null;
  private readonly step: NonNullable<StepContext['step']>;
  private readonly serialize: NonNullable<StepContext['serialize']>;
  private readonly limitOf: NonNullable<StepContext['limitOf']>;
  private readonly lessons: PlanLessons;
  private records = 0;
  private bytes = 0;
  private added = 0;
  private steps = 0;
  private engineMs = 0;
  private reserved = 0;

  constructor(
    private readonly batch: { topic: string; partition: number },
    private readonly ctx: StepContext,
  ) {
    this.refused = ctx.refused ? new RefusedFilterView(ctx.refused) : null;
    this.step = ctx.step ?? evolveInPlace;
    this.serialize = ctx.serialize ?? serializeState;
    this.limitOf = ctx.limitOf ?? (() => DEFAULT_MAX_MESSAGE_BYTES);
    this.lessons = ctx.lessons ?? new PlanLessons();
  }

  private emit(topic: string, message: Message): void {
    this.records++;
    this.bytes += estimatedBytes(message);
    const list = this.sends.get(topic);
    if (list) list.push(message);
    else this.sends.set(topic, [message]);
  }

  private deadLetter(m: RawRecord, code: DeadLetterCode, message: string): void {
    const c = this.ctx.config;
    const letter = deadLetter(m, this.batch, code, message, this.limitOf(c.dlqTopic));
    this.emit(c.dlqTopic, letter);
    this.deadLetters.push({
      code,
      offset: m.offset,
      message: String(letter.headers!['cg.error.message']),
    });
  }

  /**
   * Estimated bytes the plan writes so far: its outputs and dead letters, and
   * STATE_ESTIMATE_BYTES per session reached (their changelog records are made by `finish`).
   */
  get estimatedBytes(): number {
    return this.bytes + this.overlay.size * STATE_ESTIMATE_BYTES;
  }

  /** One record (`d` is `m` decoded) through the engine, on the batch's copy of its session. */
  add(m: RawRecord, d: DecodedRecord): void {
    this.added++;
    const input = d.ok ? d.input : d.answer;
    const failure = input === null ? null : this.stepRecord(input, d.ok);
    if (!d.ok) {
      // A malformed request the engine could not answer stays a dead letter of its own code.
      const why = failure === null ? d.message : `${d.message}; not answered: ${failure.message}`;
      this.deadLetter(m, d.code, why);
    } else if (failure !== null) this.reject(m, d, failure);
  }

  /**
   * A record that decoded, dead-lettered for `failure` with its session's state untouched; a
   * request is answered all the same (REFUSE, INVALID_REQUEST, HALT).
   */
  private reject(m: RawRecord, d: DecodedRecord & { ok: true }, failure: Failure): void {
    const answered = d.input.type === 'CompactionRequested' && this.answerAnyway(d.input, failure);
    const note = answered ? ' (the request was answered REFUSE, INVALID_REQUEST, HALT)' : '';
    this.deadLetter(m, failure.code, failure.message + note);
  }

  private answerAnyway(e: CompactionRequested, failure: Failure): boolean {
    const stamps = {
      sessionId: e.sessionId,
      decidedAt: this.ctx.clock(),
      engineVersion: this.ctx.engine.engineVersion,
    };
    const error = `${failure.code}: ${failure.message}`;
    const verdict = refuseMalformed({ ...e, error }, stamps);
    const placed = this.placeOutputs([{ record: 'verdict', value: verdict }]);
    if (!Array.isArray(placed)) return false;
    this.deliver([{ record: 'verdict', value: verdict }], placed);
    this.tally.add('MalformedRequest', []);
    return true;
  }

  /** Whether the session has state in this batch or committed. */
  private holds(sessionId: string): boolean {
    return this.overlay.has(sessionId) || this.ctx.committed.has(sessionId);
  }

  /** A copy of the session's state before this record, the caller's to change. */
  private working(sessionId: string): SessionState | undefined {
    const inBatch = this.overlay.get(sessionId);
    if (inBatch !== undefined) return inBatch === null ? undefined : cloneState(inBatch);
    return this.ctx.committed.owned(sessionId);
  }

  /**
   * The record's engine step with each stage guarded; on success its state and outputs are the
   * batch's, else nothing changed and the failure says which stage failed.
   */
  private stepRecord(input: EngineInput, decoded: boolean): Failure | null {
    const id = input.sessionId;
    const isNew = !this.holds(id);
    if (isNew) {
      const { capacity } = this.ctx;
      if (capacity !== undefined && !capacity.tryReserve()) return this.refuseAtCapacity(input);
      if (capacity !== undefined) this.reserved++;
    }
    const failure = this.stepHeld(input, decoded, isNew);
    // A failed step, or one that left no state (an unauthorized out-of-band event of a session
    // not held, contract §4b), takes no place under the cap.
    const leftNone = failure === null && isNew && !this.holds(id);
    if ((failure !== null || leftNone) && isNew && this.ctx.capacity !== undefined) {
      this.ctx.capacity.release(1);
      this.reserved--;
    }
    return failure;
  }

  private stepHeld(input: EngineInput, decoded: boolean, isNew: boolean): Failure | null {
    const id = input.sessionId;
    let before: SessionState | undefined;
    try {
      before = this.working(id);
    } catch (e) {
      return {
        code: 'STATE_UNREADABLE',
        message: `the session's stored state (its changelog record) could not be read: ${describe(e)}`,
      };
    }
    // A session refused at capacity before starts blind: events of it were not stored.
    if (isNew && this.refused?.has(id)) before = blindState();
    const result = this.timedStep(before, input);
    if (!('state' in result)) return result;
    const placed = this.placeOutputs(result.outputs);
    if (!Array.isArray(placed)) return placed;
    if (this.lessons.careful.has(id) && result.state !== undefined) {
      const unfit = this.changelogFailure(id, result.state);
      if (unfit !== null) return unfit;
    }
    // A session not held that starts blind (refused at capacity before) is a state the engine
    // was handed, not one it had: an unauthorized out-of-band event creates it no more than
    // one with no state at all (contract §4b, rev 12).
    const keep = !(isNew && input.seq === null && result.notes.includes('unauthorized'));
    if (result.state !== undefined && keep) this.overlay.set(id, result.state);
    this.tally.add(decoded ? input.type : 'MalformedRequest', result.notes);
    this.deliver(result.outputs, placed);
    return null;
  }

  private timedStep(before: SessionState | undefined, input: EngineInput): StepResult | Failure {
    const started = this.ctx.timer();
    try {
      return this.step(before, input, this.ctx.clock(), this.ctx.engine);
    } catch (e) {
      return failed('ENGINE_FAILED', 'the engine', e);
    } finally {
      this.engineMs += this.ctx.timer() - started;
      this.steps++;
    }
  }

  /** The outputs as messages of their topics, each within its topic's record limit. */
  private placeOutputs(outputs: readonly Output[]): Placed[] | Failure {
    const placed: Placed[] = [];
    for (const o of outputs) {
      let p: Placed;
      try {
        p = outputMessage(o, this.ctx.encoder, this.ctx.config);
      } catch (e) {
        return failed('OUTPUT_ENCODE_FAILED', `encoding its ${o.record}`, e);
      }
      const limit = this.limitOf(p.topic);
      if (!fits(p.message, limit)) {
        return {
          code: 'OUTPUT_TOO_LARGE',
          message: `its ${o.record} would be ${estimatedBytes(p.message)} bytes, more than topic ${p.topic} takes (max.message.bytes ${limit})`,
        };
      }
      placed.push(p);
    }
    return placed;
  }

  private deliver(outputs: readonly Output[], placed: readonly Placed[]): void {
    for (const p of placed) this.emit(p.topic, p.message);
    for (const o of outputs) this.delivered.push(o);
  }

  /** Why the session's changelog record could not be written, or null. */
  private changelogFailure(sessionId: string, state: SessionState): Failure | null {
    let value: Buffer;
    try {
      value = this.serialize(state);
    } catch (e) {
      return failed('STATE_NOT_SERIALIZABLE', "serializing the session's state after it", e);
    }
    const limit = this.limitOf(this.ctx.config.changelogTopic);
    if (!fits({ key: stateKey(sessionId), value }, limit))
      return {
        code: 'STATE_NOT_SERIALIZABLE',
        message: `the session's state after it would be ${value.length} bytes, more than the changelog topic takes (max.message.bytes ${limit})`,
      };
    return null;
  }

  /**
   * A record of a session not held while the instance is at its cap: nothing is stored, the id
   * joins the refused filter, and a request is answered on a blind state (REFUSE,
   * UNKNOWN_SESSION, HALT; a malformed one as always), its verdict naming the cap.
   */
  private refuseAtCapacity(input: EngineInput): Failure | null {
    const id = input.sessionId;
    this.atCapacity.events++;
    // An out-of-band event that fails the authority check would leave no state (contract §4b,
    // rev 12): it does not mark its session refused, so unsigned junk sent while the cap is
    // full cannot make a session that comes later start blind.
    if (input.seq === null && authorityOf(undefined, input, this.ctx.engine.trustedKeys) !== null)
      return null;
    if (this.refused !== null && !this.refused.has(id)) {
      this.refused.add(id);
      this.atCapacity.sessions++;
    }
    if (input.type !== 'CompactionRequested' && input.type !== 'MalformedRequest') return null;
    const result = this.timedStep(blindState(), input);
    if (!('state' in result)) return result;
    const max = this.ctx.capacity!.max;
    const outputs: Output[] = result.outputs.flatMap((o): Output[] =>
      o.record !== 'verdict'
        ? []
        : input.type === 'MalformedRequest'
          ? [o]
          : [{ record: 'verdict', value: atCapacityVerdict(o.value, max) }],
    );
    const placed = this.placeOutputs(outputs);
    if (!Array.isArray(placed)) return placed;
    this.deliver(outputs, placed);
    return null;
  }

  /** Slots of the session capacity this planner reserved, given back (a plan abandoned). */
  release(): void {
    this.ctx.capacity?.release(this.reserved);
    this.reserved = 0;
  }

  /**
   * The sweep, then one changelog record per touched or freed session, the refused filter's
   * changed chunks, and the input position after the batch, `nextOffset` (changelogKeys.ts: the
   * restore's position, exact with the state): the plan. Throws UnserializableStates (nothing
   * planned) when a session's state cannot be written: the caller plans the batch again with
   * those sessions checked record by record.
   */
  finish(nextOffset: string): BatchPlan {
    const { batch } = this;
    const changelog = this.ctx.config.changelogTopic;
    this.ctx.sweep?.(this.overlay);
    const unserializable: string[] = [];
    // The processing time of every session the batch reached (docs/decisions.md 161).
    const at = this.ctx.clock();
    const stamps = new Map<string, Stamp>();
    for (const [sessionId, state] of this.overlay) {
      // A session freed by the sweep loses its evidence head F with its state: it joins the
      // refused filter, so that if it comes back it starts blind (F at the top), never with less
      // than the engine would have handed on (docs/decisions.md 124).
      if (state === null) this.refused?.add(sessionId);
      const key = stateKey(sessionId);
      const value = state === null ? null : this.changelogValue(key, state);
      if (value === undefined) unserializable.push(sessionId);
      else if (state === null) this.emit(changelog, { key, value, partition: batch.partition });
      else {
        const stamp = stampAfter(state, at, this.ctx.committed.closedSince?.(sessionId));
        stamps.set(sessionId, stamp);
        const headers = stampHeaders(stamp);
        this.emit(changelog, { key, value, headers, partition: batch.partition });
      }
    }
    if (unserializable.length > 0) throw new UnserializableStates(unserializable);
    for (const [i, chunk] of this.refused?.changed() ?? []) {
      const value = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.emit(changelog, { key: refusedChunkKey(i), value, partition: batch.partition });
    }
    this.emit(changelog, {
      key: positionKey(batch.topic),
      value: encodePosition(nextOffset),
      partition: batch.partition,
    });
    return {
      sends: this.sends,
      overlay: this.overlay,
      stamps,
      delivered: this.delivered,
      deadLetters: this.deadLetters,
      tally: this.tally,
      steps: this.steps,
      engineMs: this.engineMs,
      records: this.records,
      atCapacity: this.atCapacity,
      reserved: this.reserved,
      refused: this.refused,
      taken: this.added,
      nextOffset,
    };
  }

  /** The serialized state, or undefined when it cannot be serialized or would not fit. */
  private changelogValue(key: string, state: SessionState): Buffer | undefined {
    try {
      const value = this.serialize(state);
      return fits({ key, value }, this.limitOf(this.ctx.config.changelogTopic)) ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

function failed(code: DeadLetterCode, stage: string, e: unknown): Failure {
  return {
    code,
    message: `${stage} failed on this record (a compaction-guard bug; please report it with the record): ${describe(e)}`,
  };
}

/**
 * A batch planned: its records decoded and added in order, then finished; planned again, with
 * the sessions whose state could not be written checked record by record (`lessons.careful`),
 * until it finishes. Each planned-again session adds to `careful`, so this ends.
 *
 * With `ctx.budget`, the plan takes records only until its planning time or its estimated bytes
 * reach the budget (at least one record): `taken` says how many, and its `nextOffset` is the
 * offset after the last one taken (`nextOffset` as given once all are taken). The caller commits
 * it and plans the rest in another transaction (partition.ts).
 */
export async function planBatch(
  batch: { topic: string; partition: number },
  messages: readonly RawRecord[],
  nextOffset: string,
  ctx: StepContext & { lessons: PlanLessons },
  decode: (m: RawRecord) => DecodedRecord | Promise<DecodedRecord>,
): Promise<BatchPlan> {
  const { budget } = ctx;
  for (;;) {
    const planner = new BatchPlanner(batch, ctx);
    const started = ctx.timer();
    try {
      let taken = 0;
      for (const m of messages) {
        const d = decode(m);
        planner.add(m, d instanceof Promise ? await d : d);
        taken++;
        if (budget === undefined || taken === messages.length) continue;
        if (planner.estimatedBytes >= budget.bytes || ctx.timer() - started >= budget.ms) break;
      }
      const next =
        taken === messages.length
          ? nextOffset
          : (BigInt(messages[taken - 1]!.offset) + 1n).toString();
      return planner.finish(next);
    } catch (e) {
      planner.release();
      const careful = ctx.lessons.careful;
      if (!(e instanceof UnserializableStates) || e.sessionIds.every((id) => careful.has(id)))
        throw e;
      for (const id of e.sessionIds) careful.add(id);
    }
  }
}
