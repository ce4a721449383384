/**
 * One input partition owned by this instance, as a task: its lifecycle (partitionLifecycle.ts),
 * its sessions' committed state and refused-at-capacity filter, its transactional producer (made
 * by the host's factory), and the exactly-once step per fetched batch: decode and plan record by
 * record (batch/), then one transaction (transaction.ts) with the outputs, changelog
 * records and consumer offset; the in-memory state changes only after that transaction commits.
 * The task says what became of a batch (`BatchOutcome`) and handles a failure itself: it reads
 * the batch again, or resynchronises from the changelog (groupRestore.ts restores through its
 * public restore interface). Unit-tested with a fake producer: test/unit/partition-task.test.ts.
 */
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
import { SessionStates, type ExpiryLimits } from './sessionStates';
import { writeBarrier, type RestoreTarget } from './restore';
import {
  RESTORE_RETRY_MS,
  restoreOnce,
  type RestoreHost,
  type RestoringTask,
} from './groupRestore';
import { retryUntilDone } from '../retry';
import { sleep, withTimeout } from '../time';
import { commitBatch, commitDeadlineMs, commitWithin, type CommitTimes } from './transaction';
import {
  BeforeTransactionError,
  ProducerFencedError,
  RecordTooLargeError,
  type FetchedBatch,
  type GroupMetadata,
  type TransactionalProducer,
} from './transport';

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

/** Pause before a batch that failed before its transaction began is read again. */
const READ_AGAIN_MS = 1_000;

/**
 * What became of a fetched batch, as `process` reports it; every failure is already being
 * handled by the task when it returns:
 * - committed: its unprocessed records, in one or more transactions; `lastOffset` is the last
 *   record processed, null when there was none (a late redelivery of committed records, or a
 *   stop before the first transaction): the consumer's position must not move back to it;
 * - retrying: it failed before its transaction began (nothing sent, state unchanged): after the
 *   task's pause the consumer was moved back to the batch's start, to read it again exactly;
 * - fenced: the broker fenced the task's producer (a newer one has its transactionalId): nothing
 *   of the transaction is visible; the task resynchronises with a new producer;
 * - resyncing: its transaction failed after it began, so whether it committed is unknown: the
 *   task resynchronises its state and input position from the changelog (Kafka is the truth).
 * Earlier transactions of the batch stay committed in every case.
 */
export type BatchOutcome =
  | { readonly kind: 'committed'; readonly lastOffset: string | null }
  | { readonly kind: 'retrying'; readonly cause: BeforeTransactionError }
  | { readonly kind: 'fenced'; readonly cause: ProducerFencedError }
  | { readonly kind: 'resyncing'; readonly cause: unknown };

/** What a task needs of the instance that runs it. */
export interface TaskHost extends RestoreHost {
  readonly config: Config;
  readonly codec: RegistryCodec;
  /** A new transactional producer for `partition` (src/kafka/producers.ts; a fake in tests). */
  newProducer(partition: number): TransactionalProducer;
  /** The engine's options for the next batch (the trusted key ring may be reloaded between batches). */
  engine(): EngineOptions;
  /** The record limits of the topics it writes (shared by the instance's partitions). */
  readonly limits: RecordLimits;
  /** Partitions of the topics it writes (from ensureTopics): outputs are pinned to theirs. */
  readonly partitionCounts: ReadonlyMap<string, number>;
  /** The instance's session cap; null: none. */
  readonly capacity: SessionCapacity | null;
  /** Moves the consumer's position on this input partition. */
  seekInput(partition: number, offset: string): void;
  /** The group's committed offset (for a changelog without position records). */
  committedOffset(partition: number): Promise<string>;
}

export class PartitionTask implements RestoringTask {
  /** Committed state of this partition's sessions (restored ones kept as bytes until touched). */
  readonly sessions = new SessionStates();
  /** The sessions this partition refused at capacity (restored with the states). */
  readonly refused = new RefusedFilter();
  private readonly lifecycle: PartitionLifecycle;
  private producer: TransactionalProducer;
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
    this.producer = host.newProducer(partition);
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

  /** Sessions held in memory. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Settles when the current restore or resync ends (at once when there is none). */
  whenSettled(): Promise<void> {
    return this.settled;
  }

  /** assigned → restoring, by restoreGroup (groupRestore.ts); batches wait for `settled`. */
  beginRestore(settled: Promise<void>): void {
    this.lifecycle.to('restoring');
    this.settled = settled;
  }

  /**
   * running → resyncing → running: a batch's transaction failed with an unknown outcome, the
   * producer was fenced, or the consumer crashed. A new producer, then state and input position
   * from the changelog (Kafka is the truth), until it succeeds or the partition is gone: a
   * failed resync would leave the partition unrestored for good, and its batch waiting for it
   * would hold the consumer's next fetch for every partition (a committed offset that cannot be
   * read while a partition leader is elected is one such failure: test/unit/resync-retry.test.ts
   * holds the retry; test/unit/partition-task.test.ts the resync after a failed transaction).
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
        await this.renewProducer();
        await restoreOnce([this], this.host);
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
      this.host.retryPauseMs ?? RESTORE_RETRY_MS,
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

  /** A new producer in place of the current one, connected (fencing the old one's transactions). */
  async renewProducer(): Promise<void> {
    // Bounded: a producer whose request hangs (commitWithin) must not hold its replacement.
    await withTimeout(this.disconnect(), 5_000, () => 'still disconnecting after 5 s', {
      unref: true,
    }).catch((why: unknown) =>
      this.log.debug({ partition: this.partition, why }, 'old producer left to disconnect'),
    );
    this.producer = this.host.newProducer(this.partition);
    await this.producer.connect();
  }

  /** For a restore attempt: producer connected, state cleared, barrier written. */
  async prepareRestore(): Promise<RestoreTarget> {
    await this.producer.connect();
    this.sessions.clear();
    this.refused.clear();
    return {
      partition: this.partition,
      nonce: await writeBarrier(this.producer, this.config.changelogTopic, this.partition),
      states: this.sessions,
      refused: this.refused,
    };
  }

  /** Restoring tasks become running; a resyncing one stays so until it has its position back. */
  restored(position: string | null): void {
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
   * heartbeats there, and says whether to go on). Says what became of it (`BatchOutcome`).
   * A transaction that could not commit (the errors of src/kafka/transport/errors.ts) leaves nothing of it
   * visible and the committed state intact, and the task reads the batch again or resynchronises
   * (`failed`). A record the broker refuses as too large is not such a failure: the topic's
   * limit is lowered and the records planned again, so that the record behind it is
   * dead-lettered (recordLimits.ts).
   */
  async process(
    batch: FetchedBatch,
    group: GroupMetadata,
    between: (lastOffset: string) => Promise<boolean> = async () => true,
  ): Promise<BatchOutcome> {
    try {
      const lastOffset = await this.processRecords(batch, group, between);
      return { kind: 'committed', lastOffset };
    } catch (e) {
      return this.failed(batch, e);
    }
  }

  /**
   * A batch's transaction did not commit. Before it began (nothing sent, so the state is
   * unchanged), reading the batch again is exact: after a pause (the registry or the
   * coordinator may be back) the consumer goes back to the batch's start. Once it began, its
   * outcome may be unknown, or the producer was fenced: either way Kafka is the truth, and the
   * partition is resynchronised from it (docs/guarantees.md, "fenced"). A task revoked or
   * closed in the meantime touches nothing.
   */
  private async failed(batch: FetchedBatch, e: unknown): Promise<BatchOutcome> {
    if (e instanceof BeforeTransactionError) {
      this.log.warn(
        { err: e.cause, partition: this.partition },
        'batch could not be decoded yet; retrying',
      );
      if (!this.ended) this.host.seekInput(this.partition, batch.firstOffset()!);
      await sleep(this.host.retryPauseMs ?? READ_AGAIN_MS);
      return { kind: 'retrying', cause: e };
    }
    const fenced = e instanceof ProducerFencedError;
    this.log.warn(
      { err: e, partition: this.partition, fatal: fenced },
      'batch not committed; resynchronising the partition',
    );
    if (!this.ended) this.resync(e);
    return fenced ? { kind: 'fenced', cause: e } : { kind: 'resyncing', cause: e };
  }

  /**
   * The batch's unprocessed records, in transactions: the offset of the last record processed,
   * or null when the batch had none unprocessed or it stopped before its first transaction.
   * Throws when a transaction could not commit.
   */
  private async processRecords(
    batch: FetchedBatch,
    group: GroupMetadata,
    between: (lastOffset: string) => Promise<boolean>,
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
      const plan = await this.transaction(batch, messages, group, next);
      const last = (BigInt(plan.nextOffset) - 1n).toString();
      messages = messages.slice(plan.taken);
      if (messages.length === 0) return batch.lastOffset();
      // The rest of the fetched batch in the next transaction, after a heartbeat.
      if (!(await between(last)) || !this.running) return last;
    }
  }

  /** One transaction over a prefix of `messages` (as much as the budget takes), committed. */
  private async transaction(
    batch: FetchedBatch,
    messages: readonly RawRecord[],
    group: GroupMetadata,
    next: string,
  ): Promise<BatchPlan> {
    for (;;) {
      const t0 = performance.now();
      const plan = await this.plan(batch, messages, next);
      const t1 = performance.now();
      let times: CommitTimes;
      try {
        times = await this.commit(plan, batch, group);
      } catch (e) {
        this.capacity?.release(plan.reserved);
        if (e instanceof RecordTooLargeError && this.learnTooLarge(e)) continue;
        throw e;
      }
      this.committed(plan, batch, (times.committed - t0) / 1000);
      this.capacity?.release(plan.reserved);
      this.logCommit(plan.taken, plan.records, t0, t1, times, plan.nextOffset);
      return plan;
    }
  }

  private plan(
    batch: FetchedBatch,
    messages: readonly RawRecord[],
    next: string,
  ): Promise<BatchPlan> {
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

  private commit(plan: BatchPlan, batch: FetchedBatch, group: GroupMetadata): Promise<CommitTimes> {
    return commitWithin(
      commitBatch(
        this.producer,
        {
          sends: plan.sends,
          group,
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
  private committed(plan: BatchPlan, batch: FetchedBatch, seconds: number): void {
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
    nextOffset: string,
  ): void {
    if (!this.log.isLevelEnabled('debug')) return;
    const ms = (x: number) => Math.round(x * 10) / 10;
    this.log.debug(
      {
        partition: this.partition,
        nextOffset,
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
