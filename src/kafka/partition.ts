/**
 * One input partition owned by this instance: its sessions' state, its transactional producer
 * (transactionalId derived from group + topic + partition, so a new owner fences a zombie),
 * and the exactly-once step: per fetched batch, outputs + changelog + consumer offset in one
 * transaction; the in-memory state changes only after that transaction commits.
 */
import { type Batch, type Kafka, type Message, Partitioners, type Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { evolveInPlace, type EngineOptions } from '../engine/evolve';
import type { Output } from '../engine/collector';
import { serializeState } from '../engine/serialize';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
import { EventTally } from './observers';
import { outputRequests, pinPartitions, sendProblems } from './outputChunks';
import {
  deadLetter,
  decodeRecord,
  decodeRecordNow,
  outputMessage,
  type DeadLetterCode,
  type DecodedRecord,
} from './records';
import { SessionStates } from './sessionStates';

/** What the processor reports (metrics hook up here); every method optional. */
export interface ProcessorObserver {
  /** Once per batch, after its engine steps and before its transaction: what its events did. */
  batchEvents?(tally: EventTally): void;
  output?(o: Output, latencyMs: number | null): void;
  deadLetter?(code: DeadLetterCode): void;
  transaction?(outcome: 'committed' | 'aborted', records: number): void;
  /** Once per batch (with at least one step): its engine steps and their total time. */
  engineSteps?(steps: number, seconds: number): void;
  rebalance?(): void;
  restored?(seconds: number): void;
  lag?(partition: number, records: number): void;
  readiness?(ready: boolean): void;
}

/** A failure before the batch's transaction began (e.g. the registry is unreachable). */
export class BeforeTransactionError extends Error {
  constructor(override readonly cause: unknown) {
    super(`before the transaction: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/**
 * Restored sessions (kept as bytes) decoded per sweep (every 10 s) to find the closed ones:
 * a few µs each, so a sweep adds a few ms to its batch; 100k untouched sessions of a partition
 * are all looked at within ~17 minutes of the restore.
 */
const CLASSIFY_PER_SWEEP = 1_000;

export function transactionalId(c: Config, partition: number): string {
  return `${c.groupId}-${c.inputTopic}-${partition}`;
}

export class PartitionWorker {
  /** Committed state of this partition's sessions (restored ones kept as bytes until touched). */
  readonly states = new SessionStates();
  producer: Producer;
  ready: Promise<void> = Promise.resolve();
  restored = false;
  /** Partitions of the topics it writes (from ensureTopics): outputs are pinned to theirs. */
  partitionCounts: ReadonlyMap<string, number> = new Map();
  private lastSweep = 0;

  constructor(
    readonly partition: number,
    private readonly kafka: Kafka,
    private readonly config: Config,
    private readonly codec: RegistryCodec,
    private readonly engine: EngineOptions,
    private readonly log: Logger,
    private readonly observer: ProcessorObserver,
    private readonly clock: () => number,
  ) {
    this.producer = this.newProducer();
  }

  newProducer(): Producer {
    const producer = this.kafka.producer({
      transactionalId: transactionalId(this.config, this.partition),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: this.config.transactionTimeoutMs,
      allowAutoTopicCreation: false,
      // The partitioner kafkajs uses anyway, named so that it does not warn about its v2 change.
      createPartitioner: Partitioners.DefaultPartitioner,
      // kafkajs' default for an idempotent producer is unlimited retries; the client's 200 ms
      // first delay would hold every transaction begun before the previous one's markers are
      // written (CONCURRENT_TRANSACTIONS, KAFKA-5477) for ~200 ms.
      retry: {
        retries: Number.MAX_SAFE_INTEGER,
        initialRetryTime: this.config.transactionRetryMs,
      },
    });
    if (this.log.isLevelEnabled('trace')) {
      // Every request of the transaction protocol with its duration (retries show as repeats).
      producer.on(producer.events.REQUEST, ({ payload }) =>
        this.log.trace(
          { partition: this.partition, api: payload.apiName, ms: payload.duration },
          'producer request',
        ),
      );
    }
    return producer;
  }

  async replaceProducer(): Promise<void> {
    await this.producer.disconnect().catch(() => undefined);
    this.producer = this.newProducer();
    await this.producer.connect();
  }

  /**
   * Processes one batch exactly once. Throws when the transaction could not commit: nothing
   * of the batch is then visible, and the caller rewinds the consumer to the batch's start.
   */
  async process(batch: Batch, consumerGroupId: string): Promise<void> {
    const c = this.config;
    const t0 = performance.now();
    const overlay = new Map<string, SessionState | null>();
    const sends = new Map<string, Message[]>();
    const emit = (topic: string, message: Message) => {
      const list = sends.get(topic);
      if (list) list.push(message);
      else sends.set(topic, [message]);
    };
    const delivered: Output[] = [];
    const tally = new EventTally();
    let engineMs = 0;
    for (const m of batch.messages) {
      let decoded: DecodedRecord;
      try {
        // JSON needs no registry: no promise per record then.
        decoded =
          decodeRecordNow(m, c.inputFormat) ?? (await decodeRecord(m, c.inputFormat, this.codec));
      } catch (e) {
        throw new BeforeTransactionError(e);
      }
      const input = decoded.ok ? decoded.input : decoded.answer;
      if (!decoded.ok) {
        emit(
          c.dlqTopic,
          deadLetter(m, batch.topic, batch.partition, decoded.code, decoded.message),
        );
        this.observer.deadLetter?.(decoded.code);
        this.log.warn(
          {
            code: decoded.code,
            offset: m.offset,
            partition: batch.partition,
            error: decoded.message,
          },
          'dead letter',
        );
      }
      if (!input) continue;
      // The batch changes its own copy of a session (made on first touch), so the committed
      // state stays intact should the transaction fail.
      let working = overlay.get(input.sessionId);
      if (working === undefined) working = this.states.owned(input.sessionId) ?? null;
      const decidedAt = this.clock();
      const started = performance.now();
      const result = evolveInPlace(working ?? undefined, input, decidedAt, this.engine);
      engineMs += performance.now() - started;
      overlay.set(input.sessionId, result.state);
      tally.add(decoded.ok ? input.type : 'MalformedRequest', result.notes);
      for (const o of result.outputs) {
        const { topic, message } = outputMessage(o, this.codec, c);
        emit(topic, message);
        delivered.push(o);
      }
    }
    if (tally.byType.size > 0) {
      let steps = 0;
      for (const n of tally.byType.values()) steps += n;
      this.observer.engineSteps?.(steps, engineMs / 1000);
      this.observer.batchEvents?.(tally);
    }
    this.sweepClosed(overlay);
    for (const [sessionId, state] of overlay) {
      emit(c.changelogTopic, {
        key: sessionId,
        value: state === null ? null : serializeState(state),
        partition: this.partition,
      });
    }
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    const records = [...sends.values()].reduce((n, l) => n + l.length, 0);
    const t1 = performance.now();
    let t2 = t1;
    let t3 = t1;
    const txn = await this.producer.transaction().catch((e: unknown) => {
      throw new BeforeTransactionError(e);
    });
    try {
      // Usually one request; more when the outputs would exceed the broker's record batch
      // limit together. Dead letters too: they are copies of input records plus headers, so
      // those of a fetched batch near its size limit exceed message.max.bytes together
      // (MESSAGE_TOO_LARGE on every retry: the partition would be stuck for good).
      pinPartitions(sends, this.partitionCounts);
      for (const topicMessages of outputRequests([...sends])) {
        const sent = await txn.sendBatch({ acks: -1, topicMessages });
        const { missing, repeated } = sendProblems(topicMessages, sent);
        if (missing.length > 0 || repeated.length > 0)
          throw new Error(
            `a retried produce request (kafkajs#1303) left ${missing.join(', ') || 'none'} unwritten and wrote ${repeated.join(', ') || 'none'} twice: aborting the transaction`,
          );
      }
      t2 = performance.now();
      await txn.sendOffsets({
        consumerGroupId,
        topics: [
          { topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] },
        ],
      });
      t3 = performance.now();
      await txn.commit();
    } catch (e) {
      await txn.abort().catch(() => undefined);
      this.observer.transaction?.('aborted', records);
      throw e;
    }
    this.observer.transaction?.('committed', records);
    if (this.log.isLevelEnabled('debug')) {
      // Where a batch's time goes (bench/README.md, verdict latency).
      const t4 = performance.now();
      const ms = (x: number) => Math.round(x * 10) / 10;
      this.log.debug(
        {
          partition: this.partition,
          messages: batch.messages.length,
          records,
          processMs: ms(t1 - t0),
          sendMs: ms(t2 - t1),
          offsetsMs: ms(t3 - t2),
          commitMs: ms(t4 - t3),
        },
        'batch committed',
      );
    }
    this.observer.lag?.(
      this.partition,
      Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(next))),
    );
    for (const [sessionId, state] of overlay) {
      if (state === null) this.states.delete(sessionId);
      else this.states.set(sessionId, state);
    }
    const now = this.clock();
    for (const o of delivered) {
      const at = o.record === 'verdict' ? o.value.requestedAt : null;
      this.observer.output?.(o, at === null ? null : now - at);
    }
  }

  /**
   * Frees closed sessions past the grace period by wall clock (DESIGN §4), with a tombstone in
   * the changelog. `sweepDelayMs` beyond the grace keeps late events deciding as offline.
   */
  private sweepClosed(overlay: Map<string, SessionState | null>): void {
    const now = this.clock();
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    const limit = this.config.graceMs + this.config.sweepDelayMs;
    // Restored sessions kept as bytes: a bounded number decoded per sweep to learn closedAt.
    this.states.classify(CLASSIFY_PER_SWEEP);
    for (const [sessionId, s] of this.states.decoded()) {
      if (overlay.has(sessionId)) continue;
      if (s.closedAt !== null && now - s.closedAt > limit) overlay.set(sessionId, null);
    }
  }
}
