/**
 * The stream processor (contract §8): a kafkajs consumer group over the input topic, one
 * PartitionTask per assigned partition, moved through its lifecycle (partitionLifecycle.ts).
 * On every assignment, new partitions (assigned → restoring) get a fresh transactional
 * producer (fencing any zombie), then their state is restored from the changelog before their
 * first batch is processed (→ running). A batch that failed before its transaction began is
 * read again; a transaction whose outcome is unknown, or a fenced producer, resynchronises the
 * partition from Kafka (running → resyncing → running: state and input position from the
 * changelog, changelogKeys.ts). A rebalance revokes partitions, stop() closes them.
 */
import type { Consumer, EachBatchPayload, Kafka } from './kafkajs';
import type { Logger } from 'pino';
import { ENV_NAMES, type Config } from '../config/config';
import { engineOptions } from '../engine/fleet';
import type { TrustedKeyRing } from '../engine/authority';
import type { RegistryCodec } from '../registry/codec';
import { registerSchemas } from '../registry/register';
import { retry } from '../retry';
import { cacheTransactionCoordinators, isTransientKafkaFailure } from './kafkajs';
import type { SessionDirectory, TrackedSession } from '../http/sessionDirectory';
import { SessionCapacity } from './capacity';
import { PartitionTask } from './partition';
import { RecordLimits } from './recordLimits';
import type { ProcessorObserver } from './processorObserver';
import { restorePartitions, writeBarrier, type RestoreTarget } from './restore';
import { ensureTopics } from './topics';
import { BeforeTransactionError, ProducerFencedError } from './transaction';

const RESTORE_TIMEOUT_MS = 120_000;
/** How long start-up steps are tried again while the cluster fails over (duringStartup). */
export const STARTUP_RETRY_MS = 120_000;
/** Pause before a failed resynchronisation of a partition is tried again. */
export const RESYNC_RETRY_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `attempt` until it returns without throwing, or until `gone()` (then it stops quietly);
 * each failure is reported to `failed` and followed by a pause of `delayMs`. The shell's one
 * retry policy (src/retry.ts), with no bound: only the partition's end stops it.
 */
export async function retryUntilDone(
  attempt: () => Promise<void>,
  gone: () => boolean,
  failed: (e: unknown) => void,
  delayMs: number,
): Promise<void> {
  const retried = retry(attempt, {
    attempts: Number.POSITIVE_INFINITY,
    backoff: { initialMs: delayMs, growth: 'constant' },
    retriable: () => !gone(),
    onRetry: (e) => failed(e),
  });
  // Retries end with a failure only once the partition is gone: then the stop is quiet.
  await retried.catch((e: unknown) => {
    if (!gone()) throw e;
  });
}

export interface ProcessorDeps {
  kafka: Kafka;
  codec: RegistryCodec;
  config: Config;
  log: Logger;
  /**
   * The trusted key ring of contract §4b in force now (read at each batch, so a reload applies
   * from the next batch on); null or absent: no ring, signatures are not looked at.
   */
  trustedKeys?: () => TrustedKeyRing | null;
  observer?: ProcessorObserver;
  clock?: () => number;
}

export class Processor implements SessionDirectory {
  private consumer: Consumer | null = null;
  private readonly workers = new Map<number, PartitionTask>();
  /** Partitions of the topics it writes (from ensureTopics), given to each task. */
  private partitionCounts: ReadonlyMap<string, number> = new Map();
  /** The record limits of the topics it writes (from ensureTopics), shared by the tasks. */
  private limits = new RecordLimits();
  /** The session cap over all assigned partitions (CG_MAX_SESSIONS). */
  private readonly capacity: SessionCapacity;
  private joined = false;
  private stopping = false;
  private readonly observer: ProcessorObserver;
  private readonly clock: () => number;

  constructor(private readonly deps: ProcessorDeps) {
    this.observer = deps.observer ?? {};
    this.clock = deps.clock ?? Date.now;
    this.capacity = new SessionCapacity(deps.config.maxSessions, () => this.sessionCount());
  }

  /** Ready: the group was joined and every assigned partition's state is restored. */
  isReady(): boolean {
    return this.joined && [...this.workers.values()].every((w) => w.running);
  }

  /** Sessions held in memory across assigned partitions. */
  sessionCount(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.states.size;
    return n;
  }

  /**
   * The fullest refused-at-capacity filter of the assigned partitions, as the share of its bits
   * set (0..1; its false positive rate is about the 8th power).
   */
  refusedFilterFill(): number {
    let fill = 0;
    for (const w of this.workers.values()) fill = Math.max(fill, w.refused.fill);
    return fill;
  }

  /** The assigned partitions' tasks (tests, benchmarks). */
  partitions(): ReadonlyMap<number, PartitionTask> {
    return this.workers;
  }

  /** For /sessions/{id}: the partition tracking the session and its committed state. */
  findSession(sessionId: string): TrackedSession | undefined {
    for (const [partition, w] of this.workers) {
      const state = w.states.peek(sessionId);
      if (state) return { partition, state };
    }
    return undefined;
  }

  async start(): Promise<void> {
    const { kafka, config: c, codec, log } = this.deps;
    if (c.coordinatorCache) cacheTransactionCoordinators(kafka);
    await this.duringStartup('topics', () => this.prepareTopics());
    await registerSchemas(codec, c.registryUrl, (err, attempt) =>
      log.debug({ err, attempt }, 'schema registration failed; retrying'),
    );
    await this.duringStartup('consumer', () => this.startConsumer());
  }

  /**
   * A start-up step, again while the cluster is failing over: the preflight found a broker, but
   * another may be down with the metadata still naming it (a leader, the group coordinator), and
   * kafkajs' own few retries end within a second. Seen in the cluster suite: an instance
   * started while the group coordinator was down exited. Settings errors fail at once.
   */
  private duringStartup(step: string, attempt: () => Promise<void>): Promise<void> {
    const { log } = this.deps;
    return retry(attempt, {
      deadlineMs: STARTUP_RETRY_MS,
      backoff: { initialMs: 1_000, growth: 'constant' },
      retriable: (e) => !this.stopping && isTransientKafkaFailure(e),
      onRetry: (e, n) =>
        log.warn(
          { err: e, attempt: n, step },
          `start-up: the cluster is not ready (${step}); retrying`,
        ),
    });
  }

  private async prepareTopics(): Promise<void> {
    const { kafka, config: c, log } = this.deps;
    const admin = kafka.admin();
    await admin.connect();
    try {
      const topics = await ensureTopics(admin, c);
      this.partitionCounts = topics.partitions;
      this.limits = new RecordLimits(topics.maxMessageBytes);
      if (topics.underReplicated.length > 0) {
        const { replicationFactor: rf, minInsyncReplicas: isr } = topics.replication;
        log.warn(
          { underReplicated: topics.underReplicated, wanted: topics.replication },
          `existing topics are replicated less than this cluster allows (replication factor ${rf}${isr === null ? '' : `, min.insync.replicas ${isr}`}): ` +
            `${topics.underReplicated.join('; ')}; one broker failure can then lose acknowledged outputs or stop the processor; ` +
            `raise them with kafka-reassign-partitions / kafka-configs (or set ${ENV_NAMES.replicationFactor} / ${ENV_NAMES.minInsyncReplicas} to what you accept)`,
        );
      }
    } finally {
      await admin.disconnect();
    }
  }

  private async startConsumer(): Promise<void> {
    const { kafka, config: c, log } = this.deps;
    if (this.consumer !== null) await this.consumer.disconnect().catch(() => undefined);
    const consumer = kafka.consumer({
      groupId: c.groupId,
      readUncommitted: false,
      sessionTimeout: c.sessionTimeoutMs,
      heartbeatInterval: Math.max(500, Math.floor(c.sessionTimeoutMs / 5)),
      rebalanceTimeout: Math.max(c.sessionTimeoutMs, 30_000),
      maxBytesPerPartition: c.maxBytesPerPartition,
      maxBytes: c.fetchMaxBytes,
      maxWaitTimeInMs: c.fetchMaxWaitMs,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const assigned = e.payload.memberAssignment[c.inputTopic] ?? [];
      this.onAssignment(assigned);
    });
    consumer.on(consumer.events.CRASH, (e) => {
      log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
      this.joined = false;
      this.observer.readiness?.(false);
      // kafkajs restarts the consumer from the committed offsets, while a batch of the crashed
      // run may still be committing its transaction: the restarted run would then read that
      // batch again on top of the state it left (seen on a 3-node cluster when the transaction
      // coordinator was killed: a verdict twice). Every partition is resynchronised instead:
      // a new producer fences the old run's transaction, state and position come from Kafka.
      if (this.stopping) return;
      for (const w of this.workers.values()) if (w.running) this.resync(w);
    });
    await consumer.connect();
    await consumer.subscribe({ topic: c.inputTopic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: c.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.eachBatch(payload),
    });
  }

  private onAssignment(assigned: number[]): void {
    const { kafka, config: c, codec, log } = this.deps;
    const wanted = new Set(assigned);
    for (const [p, w] of this.workers) {
      if (wanted.has(p)) continue;
      this.workers.delete(p);
      w.lifecycle.to('revoked');
      void w.producer.disconnect().catch(() => undefined);
      log.info({ partition: p }, 'partition revoked');
    }
    const added: PartitionTask[] = [];
    for (const p of assigned) {
      if (this.workers.has(p)) continue;
      const w = new PartitionTask(
        p,
        kafka,
        c,
        codec,
        () =>
          engineOptions({
            graceMs: c.graceMs,
            idleMs: c.idleMs,
            trustedKeys: this.deps.trustedKeys?.() ?? null,
          }),
        log,
        this.observer,
        this.clock,
        this.limits,
        this.capacity,
      );
      w.partitionCounts = this.partitionCounts;
      this.workers.set(p, w);
      added.push(w);
    }
    this.joined = true;
    this.observer.rebalance?.();
    this.observer.readiness?.(this.isReady());
    log.info({ assigned, added: added.map((w) => w.partition) }, 'group joined');
    if (added.length > 0) {
      for (const w of added) w.lifecycle.to('restoring');
      const ready = this.restore(added);
      for (const w of added) w.ready = ready;
    }
  }

  /**
   * New producers first (fencing zombies), then barriers, then one restore read. Restoring
   * tasks become running; a resyncing one stays so until its resync has its position back.
   */
  private async restore(workers: PartitionTask[]): Promise<void> {
    const { kafka, config: c, log } = this.deps;
    const started = this.clock();
    for (;;) {
      try {
        const targets: RestoreTarget[] = [];
        for (const w of workers) {
          await w.producer.connect();
          w.states.clear();
          w.refused.clear();
          targets.push({
            partition: w.partition,
            nonce: await writeBarrier(w.producer, c.changelogTopic, w.partition),
            states: w.states,
            refused: w.refused,
          });
        }
        await restorePartitions(
          kafka,
          c.changelogTopic,
          c.inputTopic,
          c.groupId,
          targets,
          RESTORE_TIMEOUT_MS,
        );
        for (const [i, w] of workers.entries()) {
          const restored = targets[i]!.position ?? null;
          w.position = restored === null ? null : BigInt(restored);
        }
        for (const w of workers) {
          if (w.state !== 'restoring') continue;
          // Where the restored state is (changelogKeys.ts): kafkajs began at the group's
          // committed offset, which may lag it.
          if (w.position !== null) this.seekInput(w.partition, String(w.position));
          w.lifecycle.to('running');
        }
        this.observer.restored?.((this.clock() - started) / 1000);
        this.observer.readiness?.(this.isReady());
        const sessions = workers.reduce((n, w) => n + w.states.size, 0);
        log.info(
          { partitions: workers.map((w) => w.partition), sessions, ms: this.clock() - started },
          'state restored',
        );
        return;
      } catch (e) {
        if (this.stopping || workers.every((w) => w.lifecycle.ended)) return;
        log.warn({ err: e }, 'state restore failed; retrying');
        for (const w of workers) await w.replaceProducer().catch(() => undefined);
        await sleep(1000);
      }
    }
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, resolveOffset, isRunning, isStale } = payload;
    const { config: c, log } = this.deps;
    const worker = this.workers.get(batch.partition);
    if (!worker || batch.messages.length === 0) return;
    while (!worker.running) {
      await Promise.race([worker.ready.catch(() => undefined), sleep(1000)]);
      if (!isRunning() || isStale() || worker.lifecycle.ended) return;
      await heartbeat();
    }
    if (isStale()) return;
    try {
      // A late redelivery of committed records is not resolved: kafkajs' position stays ahead.
      if (await worker.process(batch, c.groupId)) resolveOffset(batch.lastOffset());
      await heartbeat();
    } catch (e) {
      if (e instanceof BeforeTransactionError) {
        // Nothing was sent: the state is unchanged, so reading the batch again is exact.
        log.warn(
          { err: e.cause, partition: batch.partition },
          'batch could not be decoded yet; retrying',
        );
        this.consumer?.seek({
          topic: batch.topic,
          partition: batch.partition,
          offset: batch.firstOffset()!,
        });
        await sleep(1000);
        return;
      }
      // The transaction's outcome may be unknown (or we were fenced): Kafka is the truth.
      log.warn(
        { err: e, partition: batch.partition, fatal: e instanceof ProducerFencedError },
        'batch not committed; resynchronising the partition',
      );
      if (this.workers.get(batch.partition) === worker) this.resync(worker);
    }
  }

  /** A new producer, then state and input position from the changelog. */
  private resync(worker: PartitionTask): void {
    const { log } = this.deps;
    // A resync can outlive its partition (revoked) or the processor (stop()): then it must not
    // touch the consumer, whose seek() throws once it is disconnected.
    const gone = () => this.stopping || worker.lifecycle.ended;
    // One at a time per partition: two would keep fencing each other's new producer.
    if (worker.state === 'resyncing') return;
    worker.lifecycle.to('resyncing');
    // Until it succeeds or the partition is gone: a failed resync would leave the partition
    // unrestored for good, and its eachBatch waiting for it would hold the consumer's next
    // fetch for every partition (seen on a 3-node cluster when the committed offset could not
    // be read while a partition leader was being elected).
    worker.ready = retryUntilDone(
      async () => {
        await worker.replaceProducer().catch(() => undefined);
        await this.restore([worker]);
        if (gone()) return;
        // The restored position (no batch commits while resyncing), else the group's offset.
        const offset =
          worker.position === null
            ? await this.committedOffset(worker.partition)
            : String(worker.position);
        if (gone()) return;
        worker.position = BigInt(offset);
        this.seekInput(worker.partition, offset);
        worker.lifecycle.to('running');
        this.observer.readiness?.(this.isReady());
      },
      gone,
      (e) =>
        log.warn({ err: e, partition: worker.partition }, 'resynchronisation failed; retrying'),
      RESYNC_RETRY_MS,
    );
    // Nobody may await `ready` any more (e.g. after stop()): no unhandled rejection.
    worker.ready.catch((e: unknown) =>
      log.warn({ err: e, partition: worker.partition }, 'resynchronisation failed'),
    );
  }

  private seekInput(partition: number, offset: string): void {
    this.consumer?.seek({ topic: this.deps.config.inputTopic, partition, offset });
  }

  /**
   * The group's committed offset, for a changelog without position records (written before
   * them): it may lag the state after a coordinator failover (changelogKeys.ts).
   */
  private async committedOffset(partition: number): Promise<string> {
    const { kafka, config: c } = this.deps;
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [topic] = await admin.fetchOffsets({ groupId: c.groupId, topics: [c.inputTopic] });
      const committed = topic?.partitions.find((p) => p.partition === partition)?.offset ?? '-1';
      if (committed !== '-1') return committed;
      const low = (await admin.fetchTopicOffsets(c.inputTopic)).find(
        (p) => p.partition === partition,
      )?.low;
      return low ?? '0';
    } finally {
      await admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.disconnect().catch(() => undefined);
    await Promise.all(
      [...this.workers.values()].map((w) => {
        w.lifecycle.to('closed');
        return w.producer.disconnect().catch(() => undefined);
      }),
    );
    this.workers.clear();
    this.joined = false;
  }
}
