/**
 * The stream processor (contract §8): a consumer group of the transport (src/kafka/transport)
 * over the input topic, one PartitionTask per assigned partition. The processor maps the
 * group's events to task calls and routes each fetched batch to its partition's task; each
 * task owns its lifecycle (partition.ts, partitionLifecycle.ts) and handles its own failures: a
 * batch that failed before its transaction began is read again, a transaction whose outcome is
 * unknown (or a fenced producer) resynchronises the partition from Kafka. The processor
 * restores newly assigned partitions together (groupRestore.ts), resynchronises every partition
 * after a consumer crash, revokes partitions on a rebalance, and closes them on stop().
 */
import type { Logger } from 'pino';
import { ENV_NAMES, type Config } from '../config/config';
import { engineOptions } from '../engine/fleet';
import type { TrustedKeyRing } from '../engine/authority';
import type { RegistryCodec } from '../registry/codec';
import { registerSchemas } from '../registry/register';
import { retry } from '../retry';
import { sleep } from '../time';
import { restoreGroup } from './groupRestore';
import type { SessionDirectory, TrackedSession } from '../http/sessionDirectory';
import { SessionCapacity } from './capacity/gate';
import { PartitionTask, type TaskHost } from './partition';
import { RecordLimits } from './recordLimits';
import type { ProcessorObserver } from './processorObserver';
import { RESTORE_TIMEOUT_MS, restorePartitions } from './restore';
import { ensureTopics } from './topics';
import { partitionProducers, type PartitionProducers } from './producers';
import type {
  BatchControl,
  FetchedBatch,
  GroupConsumer,
  GroupConsumerOptions,
  GroupMetadata,
  Transport,
  TransportAdmin,
} from './transport';

/** How long start-up steps are tried again while the cluster fails over (duringStartup). */
export const STARTUP_RETRY_MS = 120_000;

/** The input topic's group consumer as the processor runs it (the benchmarks read with it too). */
export function inputConsumerOptions(c: Config): GroupConsumerOptions {
  return {
    groupId: c.groupId,
    topic: c.inputTopic,
    sessionTimeoutMs: c.sessionTimeoutMs,
    heartbeatIntervalMs: Math.max(500, Math.floor(c.sessionTimeoutMs / 5)),
    rebalanceTimeoutMs: Math.max(c.sessionTimeoutMs, 30_000),
    maxBytesPerPartition: c.maxBytesPerPartition,
    maxBytes: c.fetchMaxBytes,
    maxWaitMs: c.fetchMaxWaitMs,
    partitionsConcurrently: c.partitionsConsumedConcurrently,
  };
}

export interface ProcessorDeps {
  transport: Transport;
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
  private consumer: GroupConsumer | null = null;
  /** The group as of the last join: each transaction commits its offsets for it. */
  private group: GroupMetadata;
  private readonly tasks = new Map<number, PartitionTask>();
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
  /** The transactional producers the tasks commit with (one per partition, or one shared). */
  private readonly producers: PartitionProducers;

  constructor(private readonly deps: ProcessorDeps) {
    this.observer = deps.observer ?? {};
    this.clock = deps.clock ?? Date.now;
    this.producers = partitionProducers(deps.transport, deps.config, deps.log, {
      ended: (outcome) => this.observer.kafkaTransaction?.(outcome),
    });
    this.capacity = new SessionCapacity(deps.config.maxSessions, () => this.sessionCount());
    this.group = { groupId: deps.config.groupId, generationId: null, memberId: null };
  }

  /** Ready: the group was joined and every assigned partition's state is restored. */
  isReady(): boolean {
    return this.joined && [...this.tasks.values()].every((t) => t.running);
  }

  /** Sessions held in memory across assigned partitions. */
  sessionCount(): number {
    let n = 0;
    for (const t of this.tasks.values()) n += t.sessions.size;
    return n;
  }

  /**
   * The fullest refused-at-capacity filter of the assigned partitions, as the share of its bits
   * set (0..1; its false positive rate is about the 8th power).
   */
  refusedFilterFill(): number {
    let fill = 0;
    for (const t of this.tasks.values()) fill = Math.max(fill, t.refused.fill);
    return fill;
  }

  /** The assigned partitions' tasks (tests, benchmarks). */
  partitions(): ReadonlyMap<number, PartitionTask> {
    return this.tasks;
  }

  /** For /sessions/{id}: the partition tracking the session and its committed state. */
  findSession(sessionId: string): TrackedSession | undefined {
    for (const [partition, t] of this.tasks) {
      const state = t.sessions.peek(sessionId);
      if (state) return { partition, state };
    }
    return undefined;
  }

  async start(): Promise<void> {
    const { config: c, codec, log } = this.deps;
    await this.duringStartup('topics', () => this.prepareTopics());
    await registerSchemas(codec, c.registryUrl, (err, attempt) =>
      log.debug({ err, attempt }, 'schema registration failed; retrying'),
    );
    await this.duringStartup('consumer', () => this.startConsumer());
  }

  /**
   * A start-up step, again while the cluster is failing over: the preflight found a broker, but
   * another may be down with the metadata still naming it (a leader, the group coordinator), and
   * kafkajs' own few retries end within a second, so an instance started while the group
   * coordinator is down would exit (the case of test/integration/cluster/cluster-faults.test.ts,
   * "kill -9 of the group coordinator while two instances join and leave"). Settings errors fail
   * at once.
   */
  private duringStartup(step: string, attempt: () => Promise<void>): Promise<void> {
    const { log } = this.deps;
    return retry(attempt, {
      deadlineMs: STARTUP_RETRY_MS,
      backoff: { initialMs: 1_000, growth: 'constant' },
      retriable: (e) => !this.stopping && this.deps.transport.isTransient(e),
      onRetry: (e, n) =>
        log.warn(
          { err: e, attempt: n, step },
          `start-up: the cluster is not ready (${step}); retrying`,
        ),
    });
  }

  private async prepareTopics(): Promise<void> {
    const { transport, config: c, log } = this.deps;
    const admin = transport.admin();
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
    const { transport, config: c } = this.deps;
    if (this.consumer !== null) await this.disconnectConsumer();
    const consumer = transport.groupConsumer(inputConsumerOptions(c));
    this.consumer = consumer;
    await consumer.start({
      revoked: (partitions) => this.onRevoked(partitions),
      assigned: (partitions, group) => this.onAssignment(partitions, group),
      crashed: (error, restart) => this.onCrash(error, restart),
      batch: (batch, control) => this.eachBatch(batch, control),
    });
  }

  private onCrash(error: unknown, restart: boolean): void {
    this.deps.log.error({ err: error, restart }, 'consumer crashed');
    this.joined = false;
    this.observer.readiness?.(false);
    // kafkajs restarts the consumer from the committed offsets, while a batch of the crashed
    // run may still be committing its transaction: the restarted run would then read that
    // batch again on top of the state it left, and publish its verdicts twice (the case of
    // test/integration/cluster/cluster-faults.test.ts, "kill -9 of the transaction coordinator
    // in the middle of transactions"). Every partition is resynchronised instead: a new
    // producer fences the old run's transaction, state and position come from Kafka.
    if (this.stopping) return;
    for (const t of this.tasks.values()) if (t.running) t.resync(error);
  }

  private onRevoked(partitions: number[]): void {
    for (const p of partitions) {
      const t = this.tasks.get(p);
      if (t === undefined) continue;
      this.tasks.delete(p);
      t.revoke();
      this.deps.log.info({ partition: p }, 'partition revoked');
    }
  }

  /**
   * A join's whole assignment: tasks for the new partitions, restored together. A partition
   * held but not assigned is revoked here too (a consumer made again at start-up reports no
   * revocation of what the one before it held).
   */
  private onAssignment(assigned: number[], group: GroupMetadata): void {
    const { log } = this.deps;
    this.group = group;
    const wanted = new Set(assigned);
    this.onRevoked([...this.tasks.keys()].filter((p) => !wanted.has(p)));
    const host = this.taskHost();
    const added: PartitionTask[] = [];
    for (const p of assigned) {
      if (this.tasks.has(p)) continue;
      const t = new PartitionTask(p, host);
      this.tasks.set(p, t);
      added.push(t);
    }
    this.joined = true;
    this.observer.rebalance?.();
    this.observer.readiness?.(this.isReady());
    log.info({ assigned, added: added.map((t) => t.partition) }, 'group joined');
    restoreGroup(added, host);
  }

  /** What the tasks of this assignment need of the instance. */
  private taskHost(): TaskHost {
    const { transport, config: c, codec, log } = this.deps;
    return {
      config: c,
      codec,
      log,
      observer: this.observer,
      clock: this.clock,
      newProducer: (partition) => this.producers.forPartition(partition),
      readChangelog: (targets) =>
        restorePartitions(
          transport,
          c.changelogTopic,
          c.inputTopic,
          c.groupId,
          targets,
          RESTORE_TIMEOUT_MS,
          this.clock,
        ),
      engine: () =>
        engineOptions({
          graceMs: c.graceMs,
          idleMs: c.idleMs,
          trustedKeys: this.deps.trustedKeys?.() ?? null,
        }),
      limits: this.limits,
      partitionCounts: this.partitionCounts,
      capacity: this.capacity,
      stopping: () => this.stopping,
      seekInput: (partition, offset) => this.seekInput(partition, offset),
      committedOffset: (partition) => this.committedOffset(partition),
      committedOffsets: (partitions) => this.committedOffsets(partitions),
      readinessChanged: () => this.observer.readiness?.(this.isReady()),
    };
  }

  private async eachBatch(batch: FetchedBatch, control: BatchControl): Promise<void> {
    const { heartbeat, resolveOffset, isRunning, isStale } = control;
    const task = this.tasks.get(batch.partition);
    if (!task || batch.messages.length === 0) return;
    while (!task.running) {
      await Promise.race([task.whenSettled(), sleep(1000)]);
      if (!isRunning() || isStale() || task.ended) return;
      await heartbeat();
    }
    if (isStale()) return;
    // A heartbeat that fails (a rebalance) between two transactions of the batch stops it there:
    // what was committed stays, and kafkajs is told, as after the batch (below).
    let heartbeatFailed: unknown = null;
    const between = async (lastOffset: string): Promise<boolean> => {
      resolveOffset(lastOffset);
      try {
        await heartbeat();
      } catch (e) {
        heartbeatFailed = e;
        return false;
      }
      return isRunning() && !isStale();
    };
    const outcome = await task.process(batch, this.group, between);
    // A failed batch is the task's to handle (it reads the batch again or resynchronises);
    // nothing of its failed transaction may be resolved.
    if (outcome.kind !== 'committed') return;
    // A late redelivery of committed records is not resolved: kafkajs' position stays ahead.
    if (outcome.lastOffset !== null) resolveOffset(outcome.lastOffset);
    if (heartbeatFailed !== null) throw heartbeatFailed;
    await heartbeat();
  }

  private seekInput(partition: number, offset: string): void {
    this.consumer?.seek(partition, offset);
  }

  /**
   * The group's committed offset, for a changelog without position records (written before
   * them): it may lag the state after a coordinator failover (changelogKeys.ts).
   */
  private committedOffset(partition: number): Promise<string> {
    return this.withAdmin(async (admin) => {
      const committed = (await this.committedOffsetsBy(admin, [partition])).get(partition);
      if (committed !== undefined) return committed;
      const low = (await admin.topicOffsets(this.deps.config.inputTopic)).find(
        (p) => p.partition === partition,
      )?.low;
      return low ?? '0';
    });
  }

  /** The group's committed input offsets of `partitions`, for those that have one. */
  private committedOffsets(partitions: readonly number[]): Promise<Map<number, string>> {
    return this.withAdmin((admin) => this.committedOffsetsBy(admin, partitions));
  }

  private async committedOffsetsBy(
    admin: TransportAdmin,
    partitions: readonly number[],
  ): Promise<Map<number, string>> {
    const { config: c } = this.deps;
    const wanted = new Set(partitions);
    const out = new Map<number, string>();
    for (const p of await admin.committedOffsets(c.groupId, c.inputTopic))
      if (wanted.has(p.partition) && p.offset !== '-1') out.set(p.partition, p.offset);
    return out;
  }

  /** `work` with an admin connected for it alone. */
  private async withAdmin<T>(work: (admin: TransportAdmin) => Promise<T>): Promise<T> {
    const admin = this.deps.transport.admin();
    await admin.connect();
    try {
      return await work(admin);
    } finally {
      await admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.disconnectConsumer();
    await Promise.all([...this.tasks.values()].map((t) => t.close()));
    this.tasks.clear();
    await this.producers.close();
    this.joined = false;
  }

  /** Leaving the group: a consumer that will not disconnect cleanly is gone anyway. */
  private async disconnectConsumer(): Promise<void> {
    await this.consumer
      ?.stop()
      .catch((e: unknown) => this.deps.log.debug({ err: e }, 'consumer disconnect failed'));
  }
}
