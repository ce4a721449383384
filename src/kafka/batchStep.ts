/**
 * One fetched batch as a plan, without Kafka: each record decoded, then through the engine on
 * the batch's own copy of its session, and what the batch's transaction must write: outputs,
 * dead letters and changelog records by topic. The committed states are only read: the batch
 * changes its own copies (made on first touch), so a transaction that fails leaves them intact,
 * and the caller applies `overlay` only once the transaction committed.
 *
 * `decodeForBatch` is the only asynchronous part (an Avro record may need its writer's schema
 * from the registry); a `BatchPlanner` takes the decoded records one by one (so that a batch's
 * decoded events do not all live at once) and is synchronous and deterministic given its clocks.
 */
import type { Message } from 'kafkajs';
import type { Config } from '../config/config';
import type { Output } from '../engine/collector';
import type { EngineOptions } from '../engine/evolve';
import { evolveInPlace } from '../engine/step';
import { serializeState } from '../engine/serialize';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
import { encodePosition, positionKey, stateKey } from './changelogKeys';
import { EventTally } from './processorObserver';
import {
  deadLetter,
  decodeRecord,
  decodeRecordNow,
  outputMessage,
  type DeadLetterCode,
  type DecodedRecord,
  type RawRecord,
} from './records';
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
  /** A copy the caller may change in place, or undefined for an unknown session. */
  owned(sessionId: string): SessionState | undefined;
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
   * add sessions to free (null) to the overlay (the processor's sweep of closed sessions).
   */
  sweep?: (overlay: Map<string, SessionState | null>) => void;
}

export interface DeadLetterNote {
  code: DeadLetterCode;
  offset: string;
  message: string;
}

export interface BatchPlan {
  /** What the transaction writes, by topic: outputs and dead letters in record order, then the changelog. */
  sends: Map<string, Message[]>;
  /** Each touched session's state after the batch; null: freed (its changelog record is a tombstone). */
  overlay: Map<string, SessionState | null>;
  /** The engine's outputs, in order (reported once committed). */
  delivered: Output[];
  deadLetters: DeadLetterNote[];
  tally: EventTally;
  /** Engine steps (events through `evolveInPlace`) and their total time in ms. */
  steps: number;
  engineMs: number;
  /** Records in `sends`. */
  records: number;
}

/**
 * One record decoded: at once for JSON (no promise per record: it needs no registry), through
 * the registry for Avro. Throws (rejects with) BeforeTransactionError when the record cannot be
 * decoded yet (the registry is unreachable): nothing of the batch was sent, reading it again is
 * exact.
 */
export function decodeForBatch(
  m: RawRecord,
  format: StepConfig['inputFormat'],
  codec: RegistryCodec,
): DecodedRecord | Promise<DecodedRecord> {
  let now: DecodedRecord | undefined;
  try {
    now = decodeRecordNow(m, format);
  } catch (e) {
    throw new BeforeTransactionError(e);
  }
  return (
    now ??
    decodeRecord(m, format, codec).catch((e: unknown) => {
      throw new BeforeTransactionError(e);
    })
  );
}

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

/** A batch's plan, record by record: `add` each decoded record in order, then `finish`. */
export class BatchPlanner {
  private readonly overlay = new Map<string, SessionState | null>();
  private readonly sends = new Map<string, Message[]>();
  private readonly delivered: Output[] = [];
  private readonly deadLetters: DeadLetterNote[] = [];
  private readonly tally = new EventTally();
  private records = 0;
  private steps = 0;
  private engineMs = 0;

  constructor(
    private readonly batch: { topic: string; partition: number },
    private readonly ctx: StepContext,
  ) {}

  private emit(topic: string, message: Message): void {
    this.records++;
    const list = this.sends.get(topic);
    if (list) list.push(message);
    else this.sends.set(topic, [message]);
  }

  /** One record (`d` is `m` decoded) through the engine, on the batch's copy of its session. */
  add(m: RawRecord, d: DecodedRecord): void {
    const { ctx, batch } = this;
    const c = ctx.config;
    const input = d.ok ? d.input : d.answer;
    if (!d.ok) {
      this.emit(c.dlqTopic, deadLetter(m, batch.topic, batch.partition, d.code, d.message));
      this.deadLetters.push({ code: d.code, offset: m.offset, message: d.message });
    }
    if (!input) return;
    let working = this.overlay.get(input.sessionId);
    if (working === undefined) working = ctx.committed.owned(input.sessionId) ?? null;
    const decidedAt = ctx.clock();
    const started = ctx.timer();
    const result = evolveInPlace(working ?? undefined, input, decidedAt, ctx.engine);
    this.engineMs += ctx.timer() - started;
    this.steps++;
    this.overlay.set(input.sessionId, result.state);
    this.tally.add(d.ok ? input.type : 'MalformedRequest', result.notes);
    for (const o of result.outputs) {
      const { topic, message } = outputMessage(o, ctx.encoder, c);
      this.emit(topic, message);
      this.delivered.push(o);
    }
  }

  /**
   * The sweep, then one changelog record per touched or freed session and the input position
   * after the batch, `nextOffset` (changelogKeys.ts: the restore's position, exact with the
   * state): the plan.
   */
  finish(nextOffset: string): BatchPlan {
    const { batch } = this;
    const changelog = this.ctx.config.changelogTopic;
    this.ctx.sweep?.(this.overlay);
    for (const [sessionId, state] of this.overlay) {
      this.emit(changelog, {
        key: stateKey(sessionId),
        value: state === null ? null : serializeState(state),
        partition: batch.partition,
      });
    }
    this.emit(changelog, {
      key: positionKey(batch.topic),
      value: encodePosition(nextOffset),
      partition: batch.partition,
    });
    return {
      sends: this.sends,
      overlay: this.overlay,
      delivered: this.delivered,
      deadLetters: this.deadLetters,
      tally: this.tally,
      steps: this.steps,
      engineMs: this.engineMs,
      records: this.records,
    };
  }
}
