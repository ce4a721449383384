/**
 * The transport's own fetch loop over one topic, for @platformatic/kafka whose stream has no
 * per-partition pause, no seek and a wrong read_committed filter (bench/probes/platformatic/
 * design-notes.md §1, gaps 7, 8, 10). It keeps a position per partition (what `seek` sets),
 * sends one fetch at a time to each leader with the partitions that are free (owned, placed,
 * not paused, no batch of theirs in a handler), and hands each partition's batch to the handler,
 * at most `partitionsConcurrently` at once. The client is reached through FetchSource only
 * (fetchSource.ts), so that the unit tests drive the loop with a fake.
 */
import { IllegalTransitionError, Lifecycle, type TransitionTable } from '../../lifecycle';
import { settledWithin } from '../../time';
import type { FetchedBatch } from '../transport/records';
import { fetchedBatch, type RawPartition } from './records';
import { Semaphore } from './semaphore';
import { Sleepers } from './sleepers';

/** A partition of a fetch response: its index, error code and data. */
export interface FetchedPartition extends RawPartition {
  partitionIndex: number;
  errorCode: number;
}

/** Where each partition of the topic is read from. */
export interface LeaderLayout {
  topicId: string;
  /** Partition → leader node (-1: none now). */
  leaders: ReadonlyMap<number, number>;
}

/** What the loop needs of a client. */
export interface FetchSource {
  /** The topic's layout; `fresh`: asked of the cluster, not taken from a cache. */
  layout(fresh: boolean): Promise<LeaderLayout>;
  /** One read_committed fetch from `node` of the partitions at their offsets. */
  fetch(
    node: number,
    topicId: string,
    positions: ReadonlyArray<{ partition: number; offset: bigint }>,
  ): Promise<FetchedPartition[]>;
  /** Each partition's earliest offset still held. */
  earliest(partitions: number[]): Promise<Map<number, bigint>>;
}

/** What a batch's handler may do with the loop. */
export interface LoopControl {
  /** The batch is processed up to and including `offset`: the next fetch starts after it. */
  resolveOffset(offset: string): void;
  /** A revocation or seek of the partition happened since the batch was fetched. */
  isStale(): boolean;
}

export type BatchHandler = (batch: FetchedBatch, control: LoopControl) => Promise<void>;

export interface FetchLoopOptions {
  topic: string;
  partitionsConcurrently: number;
  /** A failed fetch, layout or earliest-offset read: the loop tries again after a pause. */
  onError(error: unknown): void;
  /** A handler rejected; `stale`: its batch was stale by then (revoked or sought). */
  onHandlerError(error: unknown, stale: boolean): void;
  /** A fetch answered (failures before it were passing ones). */
  onFetched?(): void;
}

/** Fetch error codes after which the partition is read from its earliest offset (fromBeginning). */
const OFFSET_OUT_OF_RANGE = 1;

/** The pause after a failed fetch or layout before that leader is asked again. */
export const FETCH_RETRY_MS = 500;
/** The longest the loop sleeps without a change (a missing leader is looked up again then). */
const IDLE_MS = 1000;

type LoopState = 'idle' | 'running' | 'stopped';
const LOOP_TRANSITIONS: TransitionTable<LoopState> = {
  idle: ['running', 'stopped'],
  running: ['stopped'],
  stopped: [],
};

export class FetchLoop {
  private readonly lifecycle = new Lifecycle<LoopState>(
    LOOP_TRANSITIONS,
    'idle',
    (from, to) =>
      new IllegalTransitionError('ILLEGAL_FETCH_LOOP_TRANSITION', 'fetch loop', from, to),
  );
  /** The partitions read; a partition without a position is not fetched until it gets one. */
  private readonly owned = new Set<number>();
  private readonly positions = new Map<number, bigint>();
  private readonly paused = new Set<number>();
  /** Bumped by a seek or revocation: a batch fetched before is stale. */
  private readonly epochs = new Map<number, number>();
  /** Bumped by anything that voids a fetch in flight: seek, revocation, pause. */
  private readonly tokens = new Map<number, number>();
  /** Partitions in a fetch in flight, or whose batch waits for or is in the handler. */
  private readonly busy = new Set<number>();
  private readonly fetchingNodes = new Set<number>();
  private readonly work = new Set<Promise<void>>();
  private layout: LeaderLayout | null = null;
  private layoutStale = true;
  private readonly handlers: Semaphore;
  private wakeUp: (() => void) | null = null;
  private dirty = false;
  /** Pauses after failures: changes do not cut them short (that would spin), `stop` does. */
  private readonly sleepers = new Sleepers();

  constructor(
    private readonly source: FetchSource,
    private readonly o: FetchLoopOptions,
    private readonly handler: BatchHandler,
  ) {
    this.handlers = new Semaphore(Math.max(1, o.partitionsConcurrently));
  }

  get running(): boolean {
    return this.lifecycle.state === 'running';
  }

  /** Starts fetching; settles when `stop` ends it. */
  start(): void {
    this.lifecycle.to('running');
    this.track(this.run());
  }

  /** Partitions to read from now on; each is fetched once it has a position. */
  add(partitions: readonly number[]): void {
    for (const p of partitions) this.owned.add(p);
    this.wake();
  }

  /** Partitions no longer read: their position and pause go, any batch of theirs is stale. */
  remove(partitions: readonly number[]): void {
    for (const p of partitions) {
      this.owned.delete(p);
      this.paused.delete(p);
    }
    this.forget(partitions);
  }

  /** Positions lost (to be placed again), any batch of theirs stale; pauses stay. */
  forget(partitions: readonly number[]): void {
    for (const p of partitions) {
      this.positions.delete(p);
      this.bump(this.epochs, p);
      this.bump(this.tokens, p);
    }
  }

  /** The next batch of `partition` starts at `offset`; what is in flight of it is stale. */
  seek(partition: number, offset: bigint): void {
    this.positions.set(partition, offset);
    this.bump(this.epochs, partition);
    this.bump(this.tokens, partition);
    this.wake();
  }

  /** A first position, unless one was set meanwhile (a seek wins over it). */
  place(partition: number, offset: bigint): void {
    if (!this.owned.has(partition) || this.positions.has(partition)) return;
    this.positions.set(partition, offset);
    this.wake();
  }

  hasPosition(partition: number): boolean {
    return this.positions.has(partition);
  }

  isOwned(partition: number): boolean {
    return this.owned.has(partition);
  }

  pause(partitions: readonly number[]): void {
    for (const p of partitions) {
      this.paused.add(p);
      this.bump(this.tokens, p);
    }
  }

  resume(partitions: readonly number[]): void {
    for (const p of partitions) this.paused.delete(p);
    this.wake();
  }

  /**
   * Stops fetching and waits for the fetches and handlers in flight, at most `graceMs` (a fetch
   * of the client cannot be cancelled; closing the client ends it).
   */
  async stop(graceMs: number): Promise<void> {
    if (this.lifecycle.state === 'stopped') return;
    this.lifecycle.to('stopped');
    this.sleepers.wakeAll();
    this.wake();
    await settledWithin(Promise.allSettled([...this.work]), graceMs, undefined);
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (this.layoutStale) await this.refreshLayout();
      for (const [node, partitions] of this.ready()) this.track(this.fetchFrom(node, partitions));
      await this.changed();
    }
  }

  private async refreshLayout(): Promise<void> {
    try {
      this.layout = await this.source.layout(this.layout !== null);
      this.layoutStale = false;
    } catch (e) {
      this.o.onError(e);
      await this.sleepers.sleep(FETCH_RETRY_MS);
    }
  }

  /** The free partitions with a position, by leader; a leader with a fetch in flight waits. */
  private ready(): Map<number, number[]> {
    const byNode = new Map<number, number[]>();
    if (this.layout === null) return byNode;
    for (const p of this.owned) {
      if (!this.positions.has(p) || this.paused.has(p) || this.busy.has(p)) continue;
      const node = this.layout.leaders.get(p) ?? -1;
      if (node < 0) {
        this.layoutStale = true;
        continue;
      }
      if (this.fetchingNodes.has(node)) continue;
      byNode.set(node, [...(byNode.get(node) ?? []), p]);
    }
    return byNode;
  }

  private async fetchFrom(node: number, partitions: number[]): Promise<void> {
    const { topicId } = this.layout!;
    const asked = partitions.map((p) => ({
      partition: p,
      offset: this.positions.get(p)!,
      token: this.tokens.get(p) ?? 0,
    }));
    this.fetchingNodes.add(node);
    for (const p of partitions) this.busy.add(p);
    const handed = new Set<number>();
    try {
      const response = await this.source.fetch(node, topicId, asked);
      this.o.onFetched?.();
      const byIndex = new Map(response.map((r) => [r.partitionIndex, r]));
      let failed = false;
      for (const a of asked) {
        const raw = byIndex.get(a.partition);
        if (raw === undefined || !this.unchanged(a.partition, a.token)) continue;
        if (raw.errorCode !== 0) {
          failed = true;
          this.onPartitionError(a.partition, raw.errorCode, a.token);
          continue;
        }
        if (this.deliver(a.partition, raw, a.offset)) handed.add(a.partition);
      }
      if (failed) await this.sleepers.sleep(FETCH_RETRY_MS);
    } catch (e) {
      this.o.onError(e);
      this.layoutStale = true;
      await this.sleepers.sleep(FETCH_RETRY_MS);
    } finally {
      this.fetchingNodes.delete(node);
      for (const p of partitions) if (!handed.has(p)) this.busy.delete(p);
      this.wake();
    }
  }

  /** Nothing voided the partition's fetch since `token` was taken. */
  private unchanged(partition: number, token: number): boolean {
    return (
      this.running &&
      this.owned.has(partition) &&
      !this.paused.has(partition) &&
      (this.tokens.get(partition) ?? 0) === token
    );
  }

  /**
   * Out of range: from the earliest offset still held, as kafkajs' fromBeginning; any other
   * code (leader moved, topic unknown to this broker): the layout is asked again.
   */
  private onPartitionError(partition: number, code: number, token: number): void {
    if (code !== OFFSET_OUT_OF_RANGE) {
      this.layoutStale = true;
      return;
    }
    this.track(
      this.source.earliest([partition]).then(
        (earliest) => {
          const offset = earliest.get(partition);
          if (offset !== undefined && this.unchanged(partition, token))
            this.positions.set(partition, offset);
        },
        (e: unknown) => this.o.onError(e),
      ),
    );
  }

  /**
   * The partition's batch to the handler (true), or its position moved past what was fetched
   * when nothing is left to deliver (aborted or control records only).
   */
  private deliver(partition: number, raw: FetchedPartition, from: bigint): boolean {
    const batch = fetchedBatch(this.o.topic, partition, raw, from);
    if (batch === null) return false;
    if (batch.messages.length === 0) {
      this.advance(partition, BigInt(batch.lastOffset()) + 1n);
      return false;
    }
    const token = this.tokens.get(partition) ?? 0;
    const epoch = this.epochs.get(partition) ?? 0;
    let resolved: bigint | null = null;
    const control: LoopControl = {
      resolveOffset: (offset) => {
        if ((this.epochs.get(partition) ?? 0) === epoch) resolved = BigInt(offset);
      },
      isStale: () => !this.owned.has(partition) || (this.epochs.get(partition) ?? 0) !== epoch,
    };
    this.track(
      this.handlers
        .run(async () => {
          // Paused, sought or revoked while waiting for a handler: the batch is void.
          if (!this.unchanged(partition, token)) return;
          try {
            await this.handler(batch, control);
          } catch (e) {
            this.o.onHandlerError(e, control.isStale());
          }
          if (resolved !== null && !control.isStale()) this.advance(partition, resolved + 1n);
        })
        .finally(() => {
          this.busy.delete(partition);
          this.wake();
        }),
    );
    return true;
  }

  private advance(partition: number, next: bigint): void {
    const now = this.positions.get(partition);
    if (now !== undefined && next > now) this.positions.set(partition, next);
  }

  private bump(counters: Map<number, number>, partition: number): void {
    counters.set(partition, (counters.get(partition) ?? 0) + 1);
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((e: unknown) => this.o.onError(e));
    this.work.add(tracked);
    void tracked.finally(() => this.work.delete(tracked));
  }

  private wake(): void {
    this.dirty = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Until something changed, or IDLE_MS passed (the loop's one wait). */
  private changed(): Promise<void> {
    if (this.dirty || !this.running) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.dirty = false;
        resolve();
      };
      const timer = setTimeout(done, IDLE_MS);
      this.wakeUp = done;
    });
  }
}
