/**
 * One fetched batch as a plan, without Kafka: each record decoded, then through the engine on
 * the batch's own copy of its session, and what the batch's transaction must write: outputs,
 * dead letters and changelog records by topic. The committed states are only read: the batch
 * changes its own copies (made on first touch), so a transaction that fails leaves them intact,
 * and the caller applies `overlay` only once the transaction committed.
 *
 * `decodeBatch` is the only asynchronous part (an Avro record may need its writer's schema from
 * the registry); `planBatch` is synchronous and deterministic given its clocks.
 */
import type { Message } from 'kafkajs';
import type { Config } from '../config/config';
import type { Output } from '../engine/collector';
import type { EngineOptions } from '../engine/evolve';
import { evolveInPlace } from '../engine/step';
import { serializeState } from '../engine/serialize';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
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
 * Every record of the batch decoded, in order. JSON needs no registry: no promise per record
 * then. Throws BeforeTransactionError when a record cannot be decoded yet (the registry is
 * unreachable): nothing of the batch was sent, reading it again is exact.
 */
export async function decodeBatch(
  messages: readonly RawRecord[],
  format: StepConfig['inputFormat'],
  codec: RegistryCodec,
): Promise<DecodedRecord[]> {
  const out: DecodedRecord[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    try {
      out[i] = decodeRecordNow(m, format) ?? (await decodeRecord(m, format, codec));
    } catch (e) {
      throw new BeforeTransactionError(e);
    }
  }
  return out;
}

/** The batch through the engine (decoded[i] is messages[i] decoded). */
export function planBatch(
  batch: { topic: string; partition: number; messages: readonly RawRecord[] },
  decoded: readonly DecodedRecord[],
  ctx: StepContext,
): BatchPlan {
  const c = ctx.config;
  const overlay = new Map<string, SessionState | null>();
  const sends = new Map<string, Message[]>();
  let records = 0;
  const emit = (topic: string, message: Message) => {
    records++;
    const list = sends.get(topic);
    if (list) list.push(message);
    else sends.set(topic, [message]);
  };
  const delivered: Output[] = [];
  const deadLetters: DeadLetterNote[] = [];
  const tally = new EventTally();
  let engineMs = 0;
  let steps = 0;
  for (let i = 0; i < batch.messages.length; i++) {
    const m = batch.messages[i]!;
    const d = decoded[i]!;
    const input = d.ok ? d.input : d.answer;
    if (!d.ok) {
      emit(c.dlqTopic, deadLetter(m, batch.topic, batch.partition, d.code, d.message));
      deadLetters.push({ code: d.code, offset: m.offset, message: d.message });
    }
    if (!input) continue;
    let working = overlay.get(input.sessionId);
    if (working === undefined) working = ctx.committed.owned(input.sessionId) ?? null;
    const decidedAt = ctx.clock();
    const started = ctx.timer();
    const result = evolveInPlace(working ?? undefined, input, decidedAt, ctx.engine);
    engineMs += ctx.timer() - started;
    steps++;
    overlay.set(input.sessionId, result.state);
    tally.add(d.ok ? input.type : 'MalformedRequest', result.notes);
    for (const o of result.outputs) {
      const { topic, message } = outputMessage(o, ctx.encoder, c);
      emit(topic, message);
      delivered.push(o);
    }
  }
  ctx.sweep?.(overlay);
  for (const [sessionId, state] of overlay) {
    emit(c.changelogTopic, {
      key: sessionId,
      value: state === null ? null : serializeState(state),
      partition: batch.partition,
    });
  }
  return { sends, overlay, delivered, deadLetters, tally, steps, engineMs, records };
}
