/**
 * One input partition owned by this instance, as a task: its lifecycle (partitionLifecycle.ts),
 * its sessions' committed state and refused-at-capacity filter, its transactional producer, and
 * the exactly-once step per fetched batch: decode and plan record by record (batchStep.ts), then
 * one transaction (transaction.ts) with the outputs, changelog records and consumer offset; the
 * in-memory state changes only after that transaction commits.
 */
import type { Batch, Kafka, Producer } from './kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { EngineOptions } from '../engine/evolve';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
import {
  PlanLessons,
  decodeForBatch,
  planBatch,
  unprocessedRecords,
  type BatchPlan,
} from './batchStep';
import type { SessionCapacity } from './capacity';
import { estimatedBytes } from './outputChunks';
import type { RecordLimits } from './recordLimits';
import type { RawRecord } from './records';
import { RefusedFilter } from './refusedFilter';
import { PartitionLifecycle, type PartitionState } from './partitionLifecycle';
import type { ProcessorObserver } from './processorObserver';
import { SessionStates } from './sessionStates';
import {
  RecordTooLargeError,
  commitBatch,
  commitDeadlineMs,
  commitWithin,
  newTransactionalProducer,
  type CommitTimes,
} from './transaction';

/**
 * Restored sessions (kept as bytes) decoded per sweep (every 10 s) to find the closed and idle
 * ones: a few µs each, so a sweep adds a few ms to its batch; 100k untouched sessions of a
 * partition are all looked at within ~17 minutes, and again in every such round.
 */
const CLASSIFY_PER_SWEEP = 1_000;

export class PartitionTask {
  /** Committed state of this partition's sessions (restored ones kept as bytes until touched). */
  readonly states = new SessionStates();
  /** The sessions this partition refused at capacity (restored with the states). */
  readonly refused = new RefusedFilter();
  readonly lifecycle: PartitionLifecycle;
  producer: Producer;
  /** Settles when the current restore or resync ends (batches wait for it). */
  ready: Promise<void> = Promise.resolve();
  /**
   * The offset after the last input record the committed state includes: set by a restore (the
   * changelog's position record, changelogKeys.ts) and by every commit; null while not known (a changelog without position records, before the
   * first commit).
   */
  position: bigint | null = null;
  /** Partitions of the topics it writes (from ensureTopics): outputs are pinned to theirs. */
  partitionCounts: ReadonlyMap<string, number> = new Map();
  private lastSweep = 0;

  constructor(
    readonly partition: number,
    private readonly kafka: Kafka,
    private readonly config: Config,
    private readonly codec: RegistryCodec,
    /** The engine's options for the next batch (the trusted key ring may be reloaded between batches). */
    private readonly engine: () => EngineOptions,
    private readonly log: Logger,
    private readonly observer: ProcessorObserver,
    private readonly clock: () => number,
    /** The record limits of the topics it writes (shared by the instance's partitions). */
    private readonly limits: RecordLimits,
    /** The instance's session cap; null: none. */
    readonly capacity: SessionCapacity | null = null,
  ) {
    this.lifecycle = new PartitionLifecycle(partition, (from, to) =>
      log.debug({ partition, from, to }, 'partition lifecycle'),
    );
    this.producer = newTransactionalProducer(kafka, config, partition, log);
  }

  get state(): PartitionState {
    return this.lifecycle.state;
  }

  /** Batches are processed only while running. */
  get running(): boolean {
    return this.lifecycle.state === 'running';
  }

  async replaceProducer(): Promise<void> {
    // Bounded: a producer whose request hangs (commitWithin) must not hold its replacement.
    const old = this.producer.disconnect().catch(() => undefined);
    await Promise.race([old, new Promise((r) => setTimeout(r, 5_000).unref())]);
    this.producer = newTransactionalProducer(this.kafka, this.config, this.partition, this.log);
    await this.producer.connect();
  }

  /**
   * Processes the batch's unprocessed records exactly once; false when it had none (a late
   * redelivery: nothing is done, and the caller must not move the consumer's position back to
   * it). Throws when the transaction could not commit (the errors of transaction.ts): nothing of
   * the batch is then visible, and the committed state is intact. A record the broker refuses as
   * too large is not one of them: the topic's limit is lowered and the batch planned again, so
   * that the record behind it is dead-lettered (recordLimits.ts).
   */
  async process(batch: Batch, consumerGroupId: string): Promise<boolean> {
    const messages = unprocessedRecords(batch.messages, this.position);
    if (messages.length === 0) {
      this.log.warn(
        {
          partition: this.partition,
          firstOffset: batch.firstOffset(),
          lastOffset: batch.lastOffset(),
          position: String(this.position),
        },
        'a batch of records already processed was fetched again; skipped',
      );
      return false;
    }
    if (messages.length < batch.messages.length)
      this.log.warn(
        {
          partition: this.partition,
          skipped: batch.messages.length - messages.length,
          position: String(this.position),
        },
        'a batch began with records already processed; those were skipped',
      );
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    for (;;) {
      const t0 = performance.now();
      const plan = await this.plan(batch, messages, next);
      const t1 = performance.now();
      let times: CommitTimes;
      try {
        times = await this.commit(plan, batch, consumerGroupId, next);
      } catch (e) {
        this.capacity?.release(plan.reserved);
        if (e instanceof RecordTooLargeError && this.learnTooLarge(e)) continue;
        throw e;
      }
      this.committed(plan, batch, next);
      this.capacity?.release(plan.reserved);
      this.logCommit(messages.length, plan.records, t0, t1, times);
      return true;
    }
  }

  private plan(batch: Batch, messages: readonly RawRecord[], next: string): Promise<BatchPlan> {
    const c = this.config;
    return planBatch(
      batch,
      messages,
      next,
      {
        config: c,
        encoder: this.codec,
        engine: this.engine(),
        committed: this.states,
        clock: this.clock,
        timer: () => performance.now(),
        sweep: (overlay) => this.sweepExpired(overlay),
        limitOf: (topic) => this.limits.of(topic),
        ...(this.capacity === null ? {} : { capacity: this.capacity }),
        refused: this.refused,
        lessons: new PlanLessons(),
      },
      (m) => decodeForBatch(m, c.inputFormat, this.codec),
    );
  }

  private commit(
    plan: BatchPlan,
    batch: Batch,
    consumerGroupId: string,
    next: string,
  ): Promise<CommitTimes> {
    return commitWithin(
      commitBatch(
        this.producer,
        {
          sends: plan.sends,
          consumerGroupId,
          topic: batch.topic,
          partition: batch.partition,
          nextOffset: next,
          partitionCounts: this.partitionCounts,
          limitOf: (topic) => this.limits.of(topic),
        },
        () => this.observer.transaction?.('aborted', plan.records),
      ),
      commitDeadlineMs(this.config),
    );
  }

  /**
   * The broker refused a request as too large: its topic's limit is lowered below it (below a
   * lone record's size, or the request's). True when that is news, so a new plan differs.
   */
  private learnTooLarge(e: RecordTooLargeError): boolean {
    const bytes = e.messages.reduce((n, m) => n + estimatedBytes(m), 0);
    const news = this.limits.refused(e.topic, bytes);
    this.log.warn(
      {
        partition: this.partition,
        topic: e.topic,
        records: e.messages.length,
        bytes,
        limit: this.limits.of(e.topic),
        news,
      },
      'the broker refused a record as too large; planning the batch again within the lower limit',
    );
    return news;
  }

  /** The transaction committed: its state becomes the partition's, and it is reported. */
  private committed(plan: BatchPlan, batch: Batch, next: string): void {
    this.observer.transaction?.('committed', plan.records);
    this.position = BigInt(next);
    this.observer.lag?.(
      this.partition,
      Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(next))),
    );
    for (const [sessionId, state] of plan.overlay) {
      if (state === null) this.states.delete(sessionId);
      else this.states.set(sessionId, state);
    }
    plan.refused?.commit();
    for (const d of plan.deadLetters) {
      this.observer.deadLetter?.(d.code);
      this.log.warn(
        { code: d.code, offset: d.offset, partition: batch.partition, error: d.message },
        'dead letter',
      );
    }
    if (plan.steps > 0) {
      this.observer.engineSteps?.(plan.steps, plan.engineMs / 1000);
      this.observer.batchEvents?.(plan.tally);
    }
    if (plan.atCapacity.events > 0) {
      this.observer.refusedAtCapacity?.(plan.atCapacity.sessions, plan.atCapacity.events);
      this.log.warn(
        {
          partition: this.partition,
          events: plan.atCapacity.events,
          newSessions: plan.atCapacity.sessions,
          max: this.capacity?.max,
        },
        'at the session cap (CG_MAX_SESSIONS): events of sessions not held were counted and not stored',
      );
    }
    const now = this.clock();
    for (const o of plan.delivered) {
      const at = o.record === 'verdict' ? o.value.requestedAt : null;
      this.observer.output?.(o, at === null ? null : now - at);
    }
  }

  /** Where a batch's time goes (bench/README.md, verdict latency). */
  private logCommit(
    messages: number,
    records: number,
    t0: number,
    t1: number,
    times: CommitTimes,
  ): void {
    if (!this.log.isLevelEnabled('debug')) return;
    const ms = (x: number) => Math.round(x * 10) / 10;
    this.log.debug(
      {
        partition: this.partition,
        messages,
        records,
        processMs: ms(t1 - t0),
        sendMs: ms(times.sent - t1),
        offsetsMs: ms(times.offsetsSent - times.sent),
        commitMs: ms(times.committed - times.offsetsSent),
      },
      'batch committed',
    );
  }

  /**
   * Frees expired sessions by wall clock, with a tombstone in the changelog: closed ones past
   * the grace period (contract §4), and idle ones (any session whose lastEventAt is older than
   * the idle period). `sweepDelayMs` beyond either keeps late events deciding as offline, which
   * drops the state in event time first. At most every 10 s.
   */
  private sweepExpired(overlay: Map<string, SessionState | null>): void {
    const now = this.clock();
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    const expired = expiredBy(now, this.config);
    // Restored sessions kept as bytes: a bounded number decoded per sweep to learn their times.
    this.states.classify(CLASSIFY_PER_SWEEP, expired);
    for (const [sessionId, s] of this.states.decoded()) {
      if (overlay.has(sessionId)) continue;
      if (expired(s)) overlay.set(sessionId, null);
    }
  }
}

/**
 * Whether the processor may free a session by wall clock `now`: closed longer ago than the
 * grace period, or idle (its last event) longer than the idle period, each plus the sweep delay.
 */
export function expiredBy(
  now: number,
  c: Pick<Config, 'graceMs' | 'idleMs' | 'sweepDelayMs'>,
): (s: SessionState) => boolean {
  const closedLimit = c.graceMs + c.sweepDelayMs;
  const idleLimit = c.idleMs + c.sweepDelayMs;
  return (s) =>
    (s.closedAt !== null && now - s.closedAt > closedLimit) ||
    (s.lastEventAt !== null && now - s.lastEventAt > idleLimit);
}
