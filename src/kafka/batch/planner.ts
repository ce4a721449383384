/**
 * The planner: one transaction's work over a batch's decoded records, without Kafka. Each
 * record goes through the engine on the batch's own copy of its session, and the plan says
 * what the transaction must write: outputs, dead letters and changelog records by topic. The
 * committed states are only read: the batch changes its own copies (made on first touch), so a
 * transaction that fails leaves them intact, and the caller applies `overlay` only once the
 * transaction committed. Who may take a place under the session cap, and who starts blind, the
 * planner asks the capacity gate (src/kafka/capacity/gate.ts).
 *
 * Containment per record (contract §8, docs/decisions.md 119): whatever the processor's own code
 * throws on one record (reading the session's state, the engine, the output encoder, the state
 * serializer), or an output too large for its topic, dead-letters that record with a code naming
 * the stage, leaves its session's state exactly as before it (each record steps a copy, kept
 * only if every stage passed), and answers a CompactionRequested anyway (REFUSE,
 * INVALID_REQUEST, HALT, as a malformed request is answered). Held by
 * test/unit/batch-containment.test.ts.
 *
 * A `BatchPlanner` takes the decoded records one by one (decoder.ts; so that a batch's decoded
 * events do not all live at once) and is synchronous and deterministic given its clocks.
 */
import type { OutRecord } from '../transport';
import type { Output } from '../../engine/collector';
import { refuseMalformed } from '../../engine/decide';
import type { CompactionRequested } from '../../engine/events';
import type { EngineInput, StepResult } from '../../engine/evolve';
import { evolveInPlace } from '../../engine/step';
import { serializeState } from '../../engine/serialize';
import { blindState, cloneState, type SessionState } from '../../engine/state';
import { atCapacityVerdict } from '../capacity/atCapacityVerdict';
import { CapacityGate, createsSession } from '../capacity/gate';
import {
  encodePosition,
  positionKey,
  refusedChunkKey,
  stampHeaders,
  stateKey,
} from '../changelogKeys';
import { deadLetter } from '../deadLetters';
import { estimatedBytes } from '../outputChunks';
import { EventTally } from '../processorObserver';
import { DEFAULT_MAX_MESSAGE_BYTES, fits } from '../recordLimits';
import { outputMessage, type DeadLetterCode, type DecodedRecord, type RawRecord } from '../records';
import { stampAfter, type Stamp } from '../sessionStates';
import { describe } from './decoder';
import {
  PlanLessons,
  STATE_ESTIMATE_BYTES,
  type BatchPlan,
  type DeadLetterNote,
  type PlanContext,
} from './plan';

/** Why a record is dead-lettered although it decoded: the stage that failed on it. */
export interface Failure {
  code: DeadLetterCode;
  message: string;
}

/** States that could not be serialized (or not within the changelog's record limit) at the end of a plan. */
export class UnserializableStates extends Error {
  constructor(readonly sessionIds: string[]) {
    super(`the state of ${sessionIds.length} session(s) could not be serialized`);
    this.name = 'UnserializableStates';
  }
}

type Placed = { topic: string; message: OutRecord };

/** A batch's plan, record by record: `add` each decoded record in order, then `finish`. */
export class BatchPlanner {
  private readonly overlay = new Map<string, SessionState | null>();
  private readonly sends = new Map<string, OutRecord[]>();
  private readonly delivered: Output[] = [];
  private readonly deadLetters: DeadLetterNote[] = [];
  private readonly tally = new EventTally();
  private readonly gate: CapacityGate;
  private readonly step: NonNullable<PlanContext['step']>;
  private readonly serialize: NonNullable<PlanContext['serialize']>;
  private readonly limitOf: NonNullable<PlanContext['limitOf']>;
  private readonly lessons: PlanLessons;
  private records = 0;
  private bytes = 0;
  private added = 0;
  private steps = 0;
  private engineMs = 0;

  constructor(
    private readonly batch: { topic: string; partition: number },
    private readonly ctx: PlanContext,
  ) {
    this.gate = new CapacityGate(ctx.capacity, ctx.refused, ctx.engine.trustedKeys);
    this.step = ctx.step ?? evolveInPlace;
    this.serialize = ctx.serialize ?? serializeState;
    this.limitOf = ctx.limitOf ?? (() => DEFAULT_MAX_MESSAGE_BYTES);
    this.lessons = ctx.lessons ?? new PlanLessons();
  }

  private emit(topic: string, message: OutRecord): void {
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
    if (isNew && !this.gate.take()) return this.refuseAtCapacity(input);
    const failure = this.stepHeld(input, decoded, isNew);
    // A failed step, or one that left no state (an unauthorized out-of-band event of a session
    // not held, contract §4b), takes no place under the cap.
    if (isNew && (failure !== null || !this.holds(id))) this.gate.giveBack();
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
    // A session refused at capacity (or freed by the sweep) before starts blind: events of it
    // were not stored.
    if (isNew && this.gate.startsBlind(id)) before = blindState();
    const result = this.timedStep(before, input);
    if (!('state' in result)) return result;
    const placed = this.placeOutputs(result.outputs);
    if (!Array.isArray(placed)) return placed;
    if (this.lessons.careful.has(id) && result.state !== undefined) {
      const unfit = this.changelogFailure(id, result.state);
      if (unfit !== null) return unfit;
    }
    // A session not held keeps no state from an event that creates none (the capacity gate's
    // rule, `createsSession`), even when it started blind.
    const keep = !isNew || createsSession(input, result.notes);
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
    if (!this.gate.refuse(input)) return null;
    if (input.type !== 'CompactionRequested' && input.type !== 'MalformedRequest') return null;
    const result = this.timedStep(blindState(), input);
    if (!('state' in result)) return result;
    const max = this.gate.max;
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
    this.gate.release();
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
      if (state === null) this.gate.freed(sessionId);
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
    for (const [i, chunk] of this.gate.refused?.changed() ?? []) {
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
      atCapacity: this.gate.atCapacity,
      reserved: this.gate.reserved,
      refused: this.gate.refused,
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
