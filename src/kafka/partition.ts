/**
 * One input partition owned by this instance, as a task: its lifecycle (partitionLifecycle.ts),
 * its sessions' committed state and refused-at-capacity filter, its transactional producer, and
 * the exactly-once step per fetched batch: decode and plan record by record (batch/), then
 * one transaction (transaction.ts) with the outputs, changelog records and consumer offset; the
 * in-memory state changes only after that transaction commits.
 */
import type { Batch, Kafka, Producer } from './kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { EngineOptions } from '../engine/evolve';
import type { SessionState } from '../engine/state';
import type { RegistryCodec } from '../registry/codec';
import { decodeForBatch } from './batch/decoder';
import { PlanLessons, type BatchPlan } from './batch/plan';
import { planBatch } from './batch/planBatch';
import { unprocessedRecords } from './batch/unprocessedRecords';
import type { SessionCapacity } from './capacity/gate';
import { estimatedBytes } from './outputChunks';
import type { RecordLimits } from './recordLimits';
import type { RawRecord } from './records';
import { RefusedFilter } from './capacity/refusedFilter';
import { PartitionLifecycle, type PartitionState } from './partitionLifecycle';
import type { ProcessorObserver } from './processorObserver';
import { SessionStates, type ExpiryLimits } from './sessionStates';
import { restorePartitions, writeBarrier, type RestoreTarget } from './restore';
import { retryUntilDone } from '../retry';
import { withTimeout } from '../time';
import {
  RecordTooLargeError,
  commitBatch,
  commitDeadlineMs,
  commitWithin,
  newTransactionalProducer,
  type CommitTimes,
} from './transaction';

/**
 * Restored sessions without a stamp (records written before stamps) decoded per sweep (every
 * 10 s) to learn whether they are closed: a few µs each, so a sweep adds a few ms to its batch;
 * 100k such sessions of a partition are all looked at within ~17 minutes, once.
 */
const CLASSIFY_PER_SWEEP = 1_000;

/**
 * Sessions one sweep frees at most: each is a tombstone in the batch's transaction, so a
 * partition whose sessions all expire together (a restore of an old changelog) frees them over
 * several batches instead of in one transaction of unbounded size (docs/decisions.md 162).
 */
const FREED_PER_SWEEP = 10_000;

/** Pause before a failed restore or resynchronisation of a partition is tried again. */
const RESYNC_RETRY_MS = 1_000;
const RESTORE_TIMEOUT_MS = 120_000;

/** What a task needs of the instance that runs it. */
export interface TaskHost {
  readonly kafka: Kafka;
  readonly config: Config;
  readonly codec: RegistryCodec;
  readonly log: Logger;
  readonly observer: ProcessorObserver;
  readonly clock: () => number;
  /** The engine's options for the next batch (the trusted key ring may be reloaded between batches). */
  engine(): EngineOptions;
  /** The record limits of the topics it writes (shared by the instance's partitions). */
  readonly limits: RecordLimits;
  /** Partitions of the topics it writes (from ensureTopics): outputs are pinned to theirs. */
  readonly partitionCounts: ReadonlyMap<string, number>;
  /** The instance's session cap; null: none. */
  readonly capacity: SessionCapacity | null;
  /** The instance is stopping: a restore or resync in flight ends quietly. */
  stopping(): boolean;
  /** Moves the consumer's position on this input partition. */
  seekInput(partition: number, offset: string): void;
  /** The group's committed offset (for a changelog without position records). */
  committedOffset(partition: number): Promise<string>;
  /** A task became running (or stopped being): the instance's readiness may have changed. */
  readinessChanged(): void;
}

export class PartitionTask {
  /** Committed state of this partition's sessions (restored ones kept as bytes until touched). */
  readonly sessions = new SessionStates();
  /** The sessions this partition refused at capacity (restored with the states). */
  readonly refused = new RefusedFilter();
  private readonly lifecycle: PartitionLifecycle;
  private producer: Producer;
  /** Settles (never rejects) when the current restore or resync ends: batches wait for it. */
  private settled: Promise<void> = Promise.resolve();
  /**
   * The offset after the last input record the committed state includes: set by a restore (the
   * changelog's position record, changelogKeys.ts) and by every commit; null while not known
   * (a changelog without position records, before the first commit).
   */
  private position: bigint | null = null;
  private lastSweep = 0;
  /** The last sweep stopped at FREED_PER_SWEEP: the next batch sweeps again. */
  private sweepUnfinished = false;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly capacity: SessionCapacity | null;

  constructor(
    readonly partition: number,
    private readonly host: TaskHost,
  ) {
    this.config = host.config;
    this.log = host.log;
    this.capacity = host.capacity;
    this.lifecycle = new PartitionLifecycle(partition, (from, to) =>
      host.log.debug({ partition, from, to }, 'partition lifecycle'),
    );
    this.producer = newTransactionalProducer(host.kafka, host.config, partition, host.log);
  }

  get phase(): PartitionState {
    return this.lifecycle.state;
  }

  /** Batches are processed only while running. */
  get running(): boolean {
    return this.lifecycle.state === 'running';
  }

  /** Revoked or closed: nothing may touch the partition's consumer position any more. */
  get ended(): boolean {
    return this.lifecycle.ended;
  }

  /** Settles when the current restore or resync ends (at once when there is none). */
  whenSettled(): Promise<void> {
    return this.settled;
  }

  /**
   * New tasks (assigned → restoring → running), restored together: new producers first (fencing
   * zombies), then barriers, then one read of the changelog for all of them.
   */
  static restore(tasks: readonly PartitionTask[], host: TaskHost): void {
    if (tasks.length === 0) return;
    for (const t of tasks) t.lifecycle.to('restoring');
    const gone = () => host.stopping() || tasks.every((t) => t.ended);
    // The restore's time, as reported, includes its failed attempts.
    const started = host.clock();
    const done = retryUntilDone(
      async (attempt) => {
        if (attempt > 1) for (const t of tasks) await t.replaceProducer();
        await PartitionTask.restoreOnce(tasks, host, started);
      },
      gone,
      (e) => host.log.warn({ err: e }, 'state restore failed; retrying'),
      RESYNC_RETRY_MS,
    ).catch((e: unknown) => host.log.warn({ err: e }, 'state restore failed'));
    for (const t of tasks) t.settled = done;
  }

  /**
   * running → resyncing → running: a batch's transaction failed with an unknown outcome, the
   * producer was fenced, or the consumer crashed. A new producer, then state and input position
   * from the changelog (Kafka is the truth), until it succeeds or the partition is gone: a
   * failed resync would leave the partition unrestored for good, and its batch waiting for it
   * would hold the consumer's next fetch for every partition (seen on a 3-node cluster when the
   * committed offset could not be read while a partition leader was being elected).
   */
  resync(cause: unknown): void {
    // One at a time per partition: two would keep fencing each other's new producer.
    if (this.lifecycle.state === 'resyncing') return;
    this.lifecycle.to('resyncing');
    this.host.observer.resync?.(this.partition);
    this.log.debug({ partition: this.partition, cause }, 'resynchronising');
    // A resync can outlive its partition (revoked) or the processor (stopped): then it must not
    // touch the consumer, whose seek() throws once it is disconnected.
    const gone = () => this.host.stopping() || this.ended;
    this.settled = retryUntilDone(
      async () => {
        await this.replaceProducer();
        await PartitionTask.restoreOnce([this], this.host);
        if (gone()) return;
        // The restored position (no batch commits while resyncing), else the group's offset.
        const offset =
          this.position === null
            ? await this.host.committedOffset(this.partition)
            : String(this.position);
        if (gone()) return;
        this.position = BigInt(offset);
        this.host.seekInput(this.partition, offset);
        this.lifecycle.to('running');
        this.host.readinessChanged();
      },
      gone,
      (e) =>
        this.log.warn({ err: e, partition: this.partition }, 'resynchronisation failed; retrying'),
      RESYNC_RETRY_MS,
    ).catch((e: unknown) =>
      this.log.warn({ err: e, partition: this.partition }, 'resynchronisation failed'),
    );
  }

  /** The group took the partition away: its producer goes, without waiting. */
  revoke(): void {
    this.lifecycle.to('revoked');
    void this.disconnect();
  }

  /** The processor stops. */
  async close(): Promise<void> {
    this.lifecycle.to('closed');
    await this.disconnect();
  }

  /** A producer that will not disconnect cleanly is gone anyway: noted, not thrown. */
  private async disconnect(): Promise<void> {
    await this.producer
      .disconnect()
      .catch((e: unknown) =>
        this.log.debug({ err: e, partition: this.partition }, 'producer disconnect failed'),
      );
  }

  private async replaceProducer(): Promise<void> {
    // Bounded: a producer whose request hangs (commitWithin) must not hold its replacement.
    await withTimeout(this.disconnect(), 5_000, () => 'still disconnecting after 5 s', {
      unref: true,
    }).catch((why: unknown) =>
      this.log.debug({ partition: this.partition, why }, 'old producer left to disconnect'),
    );
    this.producer = newTransactionalProducer(
      this.host.kafka,
      this.config,
      this.partition,
      this.log,
    );
    await this.producer.connect();
  }

  /** One attempt: barriers, one changelog read; restoring tasks become running. */
  private static async restoreOnce(
    tasks: readonly PartitionTask[],
    host: TaskHost,
    started: number = host.clock(),
  ) {
    const { config: c, clock } = host;
    const targets: RestoreTarget[] = [];
    for (const t of tasks) {
      await t.producer.connect();
      t.sessions.clear();
      t.refused.clear();
      targets.push({
        partition: t.partition,
        nonce: await writeBarrier(t.producer, c.changelogTopic, t.partition),
        states: t.sessions,
        refused: t.refused,
      });
    }
    await restorePartitions(
      host.kafka,
      c.changelogTopic,
      c.inputTopic,
      c.groupId,
      targets,
      RESTORE_TIMEOUT_MS,
      clock,
    );
    for (const [i, t] of tasks.entries()) t.restored(targets[i]!.position ?? null);
    host.observer.restored?.((clock() - started) / 1000);
    host.readinessChanged();
    const sessions = tasks.reduce((n, t) => n + t.sessions.size, 0);
    host.log.info(
      { partitions: tasks.map((t) => t.partition), sessions, ms: clock() - started },
      'state restored',
    );
  }

  /** Restoring tasks become running; a resyncing one stays so until it has its position back. */
  private restored(position: string | null): void {
    this.position = position === null ? null : BigInt(position);
    if (this.lifecycle.state !== 'restoring') return;
    // Where the restored state is (changelogKeys.ts): kafkajs began at the group's committed
    // offset, which may lag it.
    if (this.position !== null) this.host.seekInput(this.partition, String(this.position));
    this.lifecycle.to('running');
  }

  /**
   * Processes the batch's unprocessed records exactly once, in as many transactions as the
   * transaction budget needs (CG_TRANSACTION_BUDGET_MS / _BYTES; docs/decisions.md 162): each
   * commits its records' outputs, changelog records and the consumer offset after the last of
   * them, and `between` is called with that offset's record before the next (the caller
   * heartbeats there, and says whether to go on). Returns the offset of the last record
   * processed, or null when the batch had none unprocessed (a late redelivery: nothing is done,
   * and the caller must not move the consumer's position back to it) or stopped before its
   * first transaction. Throws when a transaction could not commit (the errors of
   * transaction.ts): nothing of that transaction is then visible, the committed state is intact
   * (earlier transactions of the batch stay committed). A record the broker refuses as too large
   * is not one of them: the topic's limit is lowered and the records planned again, so that the
   * record behind it is dead-lettered (recordLimits.ts).
   */
  async process(
    batch: Batch,
    consumerGroupId: string,
    between: (lastOffset: string) => Promise<boolean> = async () => true,
  ): Promise<string | null> {
    let messages = unprocessedRecords(batch.messages, this.position);
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
      return null;
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
      const plan = await this.transaction(batch, messages, consumerGroupId, next);
      const last = (BigInt(plan.nextOffset) - 1n).toString();
      messages = messages.slice(plan.taken);
      if (messages.length === 0) return batch.lastOffset();
      // The rest of the fetched batch in the next transaction, after a heartbeat.
      if (!(await between(last)) || !this.running) return last;
    }
  }

  /** One transaction over a prefix of `messages` (as much as the budget takes), committed. */
  private async transaction(
    batch: Batch,
    messages: readonly RawRecord[],
    consumerGroupId: string,
    next: string,
  ): Promise<BatchPlan> {
    for (;;) {
      const t0 = performance.now();
      const plan = await this.plan(batch, messages, next);
      const t1 = performance.now();
      let times: CommitTimes;
      try {
        times = await this.commit(plan, batch, consumerGroupId);
      } catch (e) {
        this.capacity?.release(plan.reserved);
        if (e instanceof RecordTooLargeError && this.learnTooLarge(e)) continue;
        throw e;
      }
      this.committed(plan, batch, (times.committed - t0) / 1000);
      this.capacity?.release(plan.reserved);
      this.logCommit(plan.taken, plan.records, t0, t1, times);
      return plan;
    }
  }

  private plan(batch: Batch, messages: readonly RawRecord[], next: string): Promise<BatchPlan> {
    const c = this.config;
    const route = { partition: batch.partition, partitions: this.inputPartitions() };
    return planBatch(
      batch,
      messages,
      next,
      {
        config: c,
        encoder: this.host.codec,
        engine: this.host.engine(),
        committed: this.sessions,
        clock: this.host.clock,
        timer: () => performance.now(),
        sweep: (overlay) => this.sweepExpired(overlay),
        limitOf: (topic) => this.host.limits.of(topic),
        ...(this.capacity === null ? {} : { capacity: this.capacity }),
        refused: this.refused,
        lessons: new PlanLessons(),
        budget: { ms: c.transactionBudgetMs, bytes: c.transactionBudgetBytes },
      },
      (m) => decodeForBatch(m, c.inputFormat, this.host.codec, route),
    );
  }

  /**
   * The input topic's partition count, as read at start-up: a record is checked against the
   * partition its key maps to (WRONG_PARTITION; the count never changes, docs/operations.md).
   */
  private inputPartitions(): number {
    const n = this.host.partitionCounts.get(this.config.inputTopic);
    if (n === undefined)
      throw new Error(`no partition count for the input topic ${this.config.inputTopic}`);
    return n;
  }

  private commit(plan: BatchPlan, batch: Batch, consumerGroupId: string): Promise<CommitTimes> {
    return commitWithin(
      commitBatch(
        this.producer,
        {
          sends: plan.sends,
          consumerGroupId,
          topic: batch.topic,
          partition: batch.partition,
          nextOffset: plan.nextOffset,
          partitionCounts: this.host.partitionCounts,
          limitOf: (topic) => this.host.limits.of(topic),
        },
        () => this.host.observer.transaction?.('aborted', plan.records),
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
    const news = this.host.limits.refused(e.topic, bytes);
    this.log.warn(
      {
        partition: this.partition,
        topic: e.topic,
        records: e.messages.length,
        bytes,
        limit: this.host.limits.of(e.topic),
        news,
      },
      'the broker refused a record as too large; planning the batch again within the lower limit',
    );
    return news;
  }

  /**
   * The transaction committed (`seconds` after its plan began): its state becomes the
   * partition's, and it is reported.
   */
  private committed(plan: BatchPlan, batch: Batch, seconds: number): void {
    this.host.observer.transaction?.('committed', plan.records, seconds);
    this.position = BigInt(plan.nextOffset);
    this.host.observer.lag?.(
      this.partition,
      Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(plan.nextOffset))),
    );
    for (const [sessionId, state] of plan.overlay) {
      if (state === null) this.sessions.delete(sessionId);
      else this.sessions.set(sessionId, state, plan.stamps.get(sessionId));
    }
    plan.refused?.commit();
    for (const d of plan.deadLetters) {
      this.host.observer.deadLetter?.(d.code);
      this.log.warn(
        { code: d.code, offset: d.offset, partition: batch.partition, error: d.message },
        'dead letter',
      );
    }
    if (plan.steps > 0) {
      this.host.observer.engineSteps?.(plan.steps, plan.engineMs / 1000);
      this.host.observer.batchEvents?.(plan.tally);
    }
    if (plan.atCapacity.events > 0) {
      this.host.observer.refusedAtCapacity?.(plan.atCapacity.sessions, plan.atCapacity.events);
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
    const now = this.host.clock();
    for (const o of plan.delivered) {
      const at = o.record === 'verdict' ? o.value.requestedAt : null;
      this.host.observer.output?.(o, at === null ? null : now - at);
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
   * Frees expired sessions by processing time (contract §4 "Freeing memory"; docs/decisions.md
   * 161), with a tombstone in the changelog: closed ones whose SessionClosed was processed longer
   * ago than the grace period, and any session no record reached for the idle period, each plus
   * `sweepDelayMs`, by this processor's clock and whatever the events' own times (a replay of
   * old events decides as `audit` does; junk stamped far in the past or future is held exactly
   * as long as any other session). At most every 10 s (or at the next batch when the last sweep
   * stopped at FREED_PER_SWEEP), at most FREED_PER_SWEEP sessions.
   */
  private sweepExpired(overlay: Map<string, SessionState | null>): void {
    const now = this.host.clock();
    if (now - this.lastSweep < 10_000 && !this.sweepUnfinished) return;
    this.lastSweep = now;
    this.sessions.classify(CLASSIFY_PER_SWEEP);
    const expired = this.sessions.expired(now, expiryLimits(this.config), FREED_PER_SWEEP);
    this.sweepUnfinished = expired.length >= FREED_PER_SWEEP;
    for (const sessionId of expired) if (!overlay.has(sessionId)) overlay.set(sessionId, null);
  }
}

/**
 * The sweep's periods of processing time: a closed session's grace, any session's idle period,
 * each plus the sweep delay.
 */
export function expiryLimits(c: Pick<Config, 'graceMs' | 'idleMs' | 'sweepDelayMs'>): ExpiryLimits {
  return { closedMs: c.graceMs + c.sweepDelayMs, idleMs: c.idleMs + c.sweepDelayMs };
}
