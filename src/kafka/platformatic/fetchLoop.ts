/**
 * The transport's own fetch loop over one topic, for @platformatic/kafka whose stream has no
 * per-partition pause, no seek and a wrong read_committed filter (bench/probes/platformatic/
 * design-notes.md §1, gaps 7, 8, 10). It keeps a position per partition (what `seek` sets),
 * sends one fetch at a time to each leader with the partitions that are free (owned, placed,
 * not paused, not in a fetch), and hands each partition's batch to the handler, at most
 * `partitionsConcurrently` at once. A partition whose batch is in a handler is fetched once
 * more meanwhile, from where that batch ends (one batch ahead, as kafkajs does): that batch
 * is handed over when the handler resolved all of its own and nothing (seek, pause,
 * revocation) voided it meanwhile, and dropped otherwise, so fetching and processing overlap
 * without a batch ever being handed over out of place. The client is reached through
 * FetchSource only (fetchSource.ts), so that the unit tests drive the loop with a fake.
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
  /**
   * A partition's fetch held nothing to hand over (aborted or control records only): its
   * position moved past `lastOffset` without the handler (a reader that waits for an end
   * offset counts the markers too).
   */
  onPassed?(partition: number, lastOffset: string): void;
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
  /** Partitions in a fetch in flight. */
  private readonly fetching = new Set<number>();
  /** Partitions whose batch waits for or is in the handler → the offset after that batch. */
  private readonly handling = new Map<number, bigint>();
  /** The next batch of a partition being handled, fetched ahead (at most one per partition). */
  private readonly ahead = new Map<
    number,
    { raw: FetchedPartition; from: bigint; token: number }
  >();
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
      this.ahead.delete(p);
      this.bump(this.epochs, p);
      this.bump(this.tokens, p);
    }
  }

  /** The next batch of `partition` starts at `offset`; what is in flight of it is stale. */
  seek(partition: number, offset: bigint): void {
    this.positions.set(partition, offset);
    this.ahead.delete(partition);
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
      this.ahead.delete(p);
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

  /**
   * The partitions to fetch, by leader: placed, not paused, not in a fetch, and either not
   * being handled or handled with nothing fetched ahead yet; a leader with a fetch in flight
   * waits.
   */
  private ready(): Map<number, number[]> {
    const byNode = new Map<number, number[]>();
    if (this.layout === null) return byNode;
    for (const p of this.owned) {
      if (!this.positions.has(p) || this.paused.has(p) || this.fetching.has(p)) continue;
      if (this.handling.has(p) && this.ahead.has(p)) continue;
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

  /** Where a partition is fetched from: after the batch in its handler, else its position. */
  private fetchOffset(partition: number): bigint {
    return this.handling.get(partition) ?? this.positions.get(partition)!;
  }

  private async fetchFrom(node: number, partitions: number[]): Promise<void> {
    const { topicId } = this.layout!;
    const asked = partitions.map((p) => ({
      partition: p,
      offset: this.fetchOffset(p),
      token: this.tokens.get(p) ?? 0,
    }));
    this.fetchingNodes.add(node);
    for (const p of partitions) this.fetching.add(p);
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
        this.fetched(a.partition, raw, a.offset, a.token);
      }
      if (failed) await this.sleepers.sleep(FETCH_RETRY_MS);
    } catch (e) {
      this.o.onError(e);
      this.layoutStale = true;
      await this.sleepers.sleep(FETCH_RETRY_MS);
    } finally {
      this.fetchingNodes.delete(node);
      for (const p of partitions) this.fetching.delete(p);
      this.wake();
    }
  }

  /**
   * A partition's part of a fetch asked from `from`: kept as the batch ahead while the
   * partition's batch is being handled and `from` is where that one ends; handed over when
   * `from` is the partition's position; else out of place (asked ahead, and the handler ended
   * having resolved less) and dropped: the partition is fetched again from its position.
   */
  private fetched(partition: number, raw: FetchedPartition, from: bigint, token: number): void {
    const handled = this.handling.get(partition);
    if (handled !== undefined) {
      if (handled === from) this.ahead.set(partition, { raw, from, token });
    } else if (this.positions.get(partition) === from) this.deliver(partition, raw, from);
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
   * The partition's batch to the handler, or its position moved past what was fetched when
   * nothing is left to deliver (aborted or control records only).
   */
  private deliver(partition: number, raw: FetchedPartition, from: bigint): void {
    const batch = fetchedBatch(this.o.topic, partition, raw, from);
    if (batch === null) return;
    if (batch.messages.length === 0) {
      this.advance(partition, BigInt(batch.lastOffset()) + 1n);
      this.o.onPassed?.(partition, batch.lastOffset());
      return;
    }
    this.handling.set(partition, BigInt(batch.lastOffset()) + 1n);
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
          this.handling.delete(partition);
          this.handOverAhead(partition);
          this.wake();
        }),
    );
  }

  /**
   * The batch fetched ahead of a partition whose handler just ended: handed over when it
   * starts where the partition's position now is and nothing voided it since it was asked for
   * (a handler that resolved only part of its batch, a seek, a pause or a revocation drop it;
   * the partition is then fetched from its position).
   */
  private handOverAhead(partition: number): void {
    const next = this.ahead.get(partition);
    if (next === undefined) return;
    this.ahead.delete(partition);
    if (!this.unchanged(partition, next.token)) return;
    if (this.positions.get(partition) !== next.from) return;
    this.deliver(partition, next.raw, next.from);
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
