/**
 * One input partition owned by this instance, as a task: its lifecycle (partitionLifecycle.ts),
 * its sessions' committed state, its transactional producer, and the exactly-once step per
 * fetched batch: decode and plan record by record (batchStep.ts), then one transaction (transaction.ts) with the
 * outputs, changelog records and consumer offset; the in-memory state changes only after that
 * transaction commits.
 */
import type { Batch, Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { EngineOptions } from '../engine/evolve';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
import { BatchPlanner, decodeForBatch, unprocessedRecords } from './batchStep';
import { PartitionLifecycle, type PartitionState } from './partitionLifecycle';
import type { ProcessorObserver } from './processorObserver';
import { SessionStates } from './sessionStates';
import {
  commitBatch,
  commitDeadlineMs,
  commitWithin,
  newTransactionalProducer,
} from './transaction';

/**
 * Restored sessions (kept as bytes) decoded per sweep (every 10 s) to find the closed ones:
 * a few µs each, so a sweep adds a few ms to its batch; 100k untouched sessions of a partition
 * are all looked at within ~17 minutes of the restore.
 */
const CLASSIFY_PER_SWEEP = 1_000;

export class PartitionTask {
  /** Committed state of this partition's sessions (restored ones kept as bytes until touched). */
  readonly states = new SessionStates();
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
   * the batch is then visible, and the committed state is intact.
   */
  async process(batch: Batch, consumerGroupId: string): Promise<boolean> {
    const c = this.config;
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
    const t0 = performance.now();
    const planner = new BatchPlanner(batch, {
      config: c,
      encoder: this.codec,
      engine: this.engine(),
      committed: this.states,
      clock: this.clock,
      timer: () => performance.now(),
      sweep: (overlay) => this.sweepClosed(overlay),
    });
    for (const m of messages) {
      const d = decodeForBatch(m, c.inputFormat, this.codec);
      planner.add(m, d instanceof Promise ? await d : d);
    }
    const next = (BigInt(batch.lastOffset()) + 1n).toString();
    const plan = planner.finish(next);
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
    const t1 = performance.now();
    const times = await commitWithin(
      commitBatch(
        this.producer,
        {
          sends: plan.sends,
          consumerGroupId,
          topic: batch.topic,
          partition: batch.partition,
          nextOffset: next,
          partitionCounts: this.partitionCounts,
        },
        () => this.observer.transaction?.('aborted', plan.records),
      ),
      commitDeadlineMs(c),
    );
    this.observer.transaction?.('committed', plan.records);
    this.position = BigInt(next);
    if (this.log.isLevelEnabled('debug')) {
      // Where a batch's time goes (bench/README.md, verdict latency).
      const ms = (x: number) => Math.round(x * 10) / 10;
      this.log.debug(
        {
          partition: this.partition,
          messages: messages.length,
          records: plan.records,
          processMs: ms(t1 - t0),
          sendMs: ms(times.sent - t1),
          offsetsMs: ms(times.offsetsSent - times.sent),
          commitMs: ms(times.committed - times.offsetsSent),
        },
        'batch committed',
      );
    }
    this.observer.lag?.(
      this.partition,
      Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(next))),
    );
    for (const [sessionId, state] of plan.overlay) {
      if (state === null) this.states.delete(sessionId);
      else this.states.set(sessionId, state);
    }
    const now = this.clock();
    for (const o of plan.delivered) {
      const at = o.record === 'verdict' ? o.value.requestedAt : null;
      this.observer.output?.(o, at === null ? null : now - at);
    }
    return true;
  }

  /**
   * Frees closed sessions past the grace period by wall clock (contract §4), with a tombstone in
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
