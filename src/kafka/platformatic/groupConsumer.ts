/**
 * The transport's consumer group (src/kafka/transport/consumer.ts) on @platformatic/kafka:
 * the library's Consumer for the membership only (classic protocol: KIP-848 would send
 * generation 0 in transactions, design-notes.md gap 12; its own timer heartbeats), the
 * transport's fetch loop for the records (fetchLoop.ts: pause, seek, a correct read_committed
 * filter), no autocommit (offsets commit in the transactions).
 */
import {
  Admin,
  type BaseOptions,
  Consumer,
  FetchIsolationLevels,
  GroupProtocols,
} from '@platformatic/kafka';
import { IllegalTransitionError, Lifecycle, type TransitionTable } from '../../lifecycle';
import { settledWithin } from '../../time';
import type {
  BatchControl,
  GroupConsumer,
  GroupConsumerOptions,
  GroupHandlers,
} from '../transport/consumer';
import type { GroupMetadata } from '../transport/producer';
import { stableCommittedOffsets } from './admin';
import {
  assignmentChange,
  membershipContinues,
  topicPartitions,
  type Membership,
} from './assignment';
import { hasProtocolError } from './errorTypes';
import { FETCH_RETRY_MS, FetchLoop } from './fetchLoop';
import { consumerFetchSource } from './fetchSource';
import { Sleepers } from './sleepers';

/**
 * A batch's heartbeat after the partition was revoked or sought: what is left of the batch is
 * not to be processed (kafkajs rejects it with REBALANCE_IN_PROGRESS; the processor stops the
 * batch there either way, and the loop drops the error of a stale batch).
 */
export class StaleBatchError extends Error {
  constructor(readonly partition: number) {
    super(`partition ${partition} was revoked or sought since its batch was fetched`);
    this.name = 'StaleBatchError';
  }
}

/** created → running (start) → stopped; stop before start is allowed. */
type GroupState = 'created' | 'running' | 'stopped';
const GROUP_TRANSITIONS: TransitionTable<GroupState> = {
  created: ['running', 'stopped'],
  running: ['stopped'],
  stopped: [],
};

const isUnstableOffsetCommit = (e: unknown) => hasProtocolError(e, 'UNSTABLE_OFFSET_COMMIT');

export function platformaticGroupConsumer(
  base: BaseOptions,
  o: GroupConsumerOptions,
): GroupConsumer & { readonly client: Consumer } {
  const consumer = new Consumer({
    ...base,
    groupId: o.groupId,
    groupProtocol: GroupProtocols.CLASSIC,
    sessionTimeout: o.sessionTimeoutMs,
    heartbeatInterval: o.heartbeatIntervalMs,
    rebalanceTimeout: o.rebalanceTimeoutMs,
    autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxBytes: o.maxBytes,
    maxWaitTime: o.maxWaitMs,
  });
  const admin = new Admin(base);
  const source = consumerFetchSource(consumer, o.topic, o);
  const sleepers = new Sleepers();
  let handlers: GroupHandlers | null = null;
  let assigned: number[] = [];
  /** The membership of the last join told (null: none, or it was lost since). */
  let membership: Membership | null = null;
  const lifecycle = new Lifecycle<GroupState>(
    GROUP_TRANSITIONS,
    'created',
    (from, to) =>
      new IllegalTransitionError('ILLEGAL_GROUP_CONSUMER_TRANSITION', 'group consumer', from, to),
  );
  const isRunning = () => lifecycle.state === 'running';
  /** The joins told so far, in order (onJoin). */
  let joins = Promise.resolve();
  let joinCount = 0;
  let rejoining = false;
  // A failure that lasts a whole session timeout is the loop failing for good: reported once.
  let failingSince: number | null = null;

  const succeeded = () => {
    failingSince = null;
  };
  const failed = (e: unknown) => {
    const now = Date.now();
    failingSince ??= now;
    if (now - failingSince < o.sessionTimeoutMs) return;
    failingSince = null;
    crash(e);
  };

  const loop = new FetchLoop(
    source,
    {
      topic: o.topic,
      partitionsConcurrently: o.partitionsConcurrently,
      onError: failed,
      // A handler's error on a stale batch is the end of that batch (StaleBatchError), not a
      // failure; on a current one the consumer crashes and restarts, as kafkajs does when
      // eachBatch throws.
      onHandlerError: (e, stale) => {
        if (!stale) crash(e);
      },
      onFetched: succeeded,
    },
    async (batch, loopControl) => {
      const control: BatchControl = {
        heartbeat: async () => {
          if (loopControl.isStale()) throw new StaleBatchError(batch.partition);
        },
        resolveOffset: loopControl.resolveOffset,
        isRunning,
        isStale: loopControl.isStale,
      };
      await handlers?.batch(batch, control);
    },
  );

  /**
   * Where new partitions start: the group's committed offset, else their earliest (kafkajs'
   * fromBeginning); tried again until read, for the partitions still owned.
   */
  async function startPositions(partitions: number[]): Promise<Map<number, bigint>> {
    const out = new Map<number, bigint>();
    while (isRunning()) {
      const waiting = partitions.filter((p) => loop.isOwned(p) && !loop.hasPosition(p));
      if (waiting.length === 0) break;
      try {
        const committed = await stableCommittedOffsets(admin, o.groupId, o.topic, waiting);
        const none = waiting.filter((p) => (committed.get(p) ?? -1n) < 0n);
        const earliest = none.length > 0 ? await source.earliest(none) : new Map<number, bigint>();
        for (const p of waiting) {
          const c = committed.get(p) ?? -1n;
          const offset = c >= 0n ? c : earliest.get(p);
          if (offset !== undefined) out.set(p, offset);
        }
        succeeded();
        break;
      } catch (e) {
        if (!isUnstableOffsetCommit(e)) failed(e);
        await sleepers.sleep(FETCH_RETRY_MS);
      }
    }
    return out;
  }

  async function placeFromCommitted(partitions: number[]): Promise<void> {
    for (const [p, offset] of await startPositions(partitions)) loop.place(p, offset);
  }

  /**
   * A join (the first, or the library's own rejoin after a rebalance): revoked first, then,
   * once the new partitions' committed offsets are read stable, the whole assignment with the
   * join's real generation and member id. The stable read comes before the user's restore of
   * them: a transaction of the partitions' last owner still open then is resolved first
   * (design-notes.md §7, step 3). Joins are told in order; one overtaken by a newer join while
   * reading is not assigned (the newer one's assignment follows).
   */
  function onJoin(e: { generationId?: number; memberId: string }): void {
    if (!isRunning() || handlers === null) return;
    const h = handlers;
    const now = topicPartitions(consumer.assignments, o.topic);
    const group: GroupMetadata = {
      groupId: o.groupId,
      generationId: e.generationId ?? consumer.generationId,
      memberId: e.memberId,
    };
    // A partition is kept only across consecutive generations of one member: after a missed
    // one, another member may have processed it, so it is revoked and restored like a new one.
    const continued = membershipContinues(membership, group);
    membership = group;
    const { revoked, added } = assignmentChange(assigned, now, continued);
    assigned = now;
    joinCount += 1;
    const join = joinCount;
    loop.remove(revoked);
    loop.add(added);
    tell(async () => {
      h.revoked(revoked);
      const positions = await startPositions(added);
      if (isRunning() && join === joinCount) h.assigned(now, group);
      for (const [p, offset] of positions) loop.place(p, offset);
    });
  }

  /** What the group tells its user, after what it told before (a throwing handler crashes). */
  function tell(step: () => void | Promise<void>): void {
    joins = joins.then(step).catch((e: unknown) => handlers?.crashed(e, true));
  }

  /** Everything goes; the loop starts again from the committed offsets (kafkajs' restart). */
  function crash(e: unknown): void {
    if (!isRunning()) return;
    handlers?.crashed(e, true);
    loop.forget(assigned);
    void placeFromCommitted(assigned);
  }

  /**
   * The library could not rejoin (it emits `error` and stops heartbeating): this member is out
   * of the group, so all it held is revoked; it joins again by itself.
   */
  async function rejoin(e: unknown): Promise<void> {
    if (!isRunning() || handlers === null || rejoining) return;
    rejoining = true;
    const h = handlers;
    const lost = assigned;
    assigned = [];
    membership = null;
    joinCount += 1;
    loop.remove(lost);
    tell(() => {
      h.revoked(lost);
      h.crashed(e, true);
    });
    while (isRunning()) {
      await sleepers.sleep(FETCH_RETRY_MS);
      if (!isRunning()) break;
      try {
        await consumer.joinGroup(groupOptions);
        break;
      } catch {
        // Tried again after the pause, until it joins or the consumer stops.
      }
    }
    rejoining = false;
  }

  const groupOptions = {
    sessionTimeout: o.sessionTimeoutMs,
    heartbeatInterval: o.heartbeatIntervalMs,
    rebalanceTimeout: o.rebalanceTimeoutMs,
  };

  return {
    client: consumer,

    async start(h) {
      handlers = h;
      lifecycle.to('running');
      consumer.on('consumer:group:join', onJoin);
      // Without a listener, the library's `error` event would throw.
      consumer.on('error', (e: unknown) => void rejoin(e));
      consumer.topics.track(o.topic);
      loop.start();
      await consumer.joinGroup(groupOptions);
      await joins;
    },

    seek: (partition, offset) => {
      if (loop.isOwned(partition)) loop.seek(partition, BigInt(offset));
    },
    pause: (partitions) => loop.pause(partitions),
    resume: (partitions) => loop.resume(partitions),

    /**
     * Ends the loop (handlers in flight get up to the rebalance timeout, the bound Kafka gives a
     * member), then leaves the group and closes the clients, each bounded in time.
     */
    async stop() {
      if (lifecycle.state === 'stopped') return;
      lifecycle.to('stopped');
      sleepers.wakeAll();
      await loop.stop(o.rebalanceTimeoutMs);
      const closing = Promise.allSettled([consumer.close(true), admin.close()]);
      await settledWithin(closing, o.sessionTimeoutMs, undefined);
    },
  };
}
