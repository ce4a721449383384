/**
 * The transport's topic consumer (src/kafka/transport/topicConsumer.ts) on @platformatic/kafka,
 * with the kafkajs one's semantics (src/kafka/kafkajs/topicConsumer.ts): read_committed, in a
 * group, a partition without a committed offset from its earliest record or its end, seeks,
 * offsets committed only when asked, each fetch and each batch's end reported. The library's
 * Consumer holds the membership only (classic protocol); the records come through the
 * transport's fetch loop (fetchLoop.ts), one per topic, because the library's stream has no
 * seek and delivers some aborted records (design-notes.md gaps 8 and 10).
 *
 * Where it differs from kafkajs, by the library: a handler that rejects has its record read
 * again after a pause, where kafkajs restarts the whole consumer; the library cannot log
 * through pino (gap 17), so the consumer's own failures are logged here.
 */
import {
  type BaseOptions,
  Consumer,
  FetchIsolationLevels,
  GroupProtocols,
} from '@platformatic/kafka';
import type { Logger } from 'pino';
import { settledWithin } from '../../time';
import type { TransportAdmin } from '../transport/admin';
import type { FetchedBatch } from '../transport/records';
import type {
  TopicConsumer,
  TopicConsumerOptions,
  TopicHandlers,
} from '../transport/topicConsumer';
import { platformaticAdmin } from './admin';
import { assignmentChange, topicPartitions } from './assignment';
import { FETCH_RETRY_MS, FetchLoop, type LoopControl } from './fetchLoop';
import { consumerFetchSource } from './fetchSource';
import { Sleepers } from './sleepers';

/** kafkajs' consumer defaults for what the options leave out. */
const MAX_BYTES = 10 * 1024 * 1024;
const MAX_BYTES_PER_PARTITION = 1024 * 1024;
const SESSION_TIMEOUT_MS = 30_000;
const REBALANCE_TIMEOUT_MS = 60_000;
const HEARTBEAT_INTERVAL_MS = 3_000;

/**
 * Where a newly assigned partition starts: the group's committed offset, else its earliest
 * record (`fromBeginning`) or its end (the last stable offset, as kafkajs' read_committed
 * consumer). A reader's own start (`startAt`) wins over it (FetchLoop.place keeps a sought
 * position). Pure.
 */
export function startPosition(
  p: { committed: bigint; low: bigint; high: bigint },
  fromBeginning: boolean,
): bigint {
  if (p.committed >= 0n) return p.committed;
  return fromBeginning ? p.low : p.high;
}

/** Each partition's start (`startPosition`) from the admin's answers. */
async function startPositions(
  admin: TransportAdmin,
  groupId: string,
  topic: string,
  partitions: readonly number[],
  fromBeginning: boolean,
): Promise<Map<number, bigint>> {
  const committed = new Map(
    (await admin.committedOffsets(groupId, topic)).map((c) => [c.partition, BigInt(c.offset)]),
  );
  const ends = new Map((await admin.topicOffsets(topic)).map((o) => [o.partition, o]));
  const out = new Map<number, bigint>();
  for (const p of partitions) {
    const end = ends.get(p);
    if (end === undefined) continue;
    const at = { committed: committed.get(p) ?? -1n, low: BigInt(end.low), high: BigInt(end.high) };
    out.set(p, startPosition(at, fromBeginning));
  }
  return out;
}

export function platformaticTopicConsumer(
  base: BaseOptions,
  o: TopicConsumerOptions,
  log: Logger,
): TopicConsumer {
  const sessionTimeout = o.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
  const groupOptions = {
    sessionTimeout,
    heartbeatInterval: o.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
    rebalanceTimeout: Math.max(REBALANCE_TIMEOUT_MS, sessionTimeout),
  };
  const consumer = new Consumer({
    ...base,
    groupId: o.groupId,
    groupProtocol: GroupProtocols.CLASSIC,
    ...groupOptions,
    autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxBytes: MAX_BYTES,
    maxWaitTime: o.maxWaitMs,
  });
  const admin = platformaticAdmin(base);
  const consumerLog = log.child({ groupId: o.groupId });
  const sleepers = new Sleepers();
  const loops = new Map<string, FetchLoop>();
  const fetchers: Consumer[] = [];
  const assigned = new Map<string, number[]>();
  /** The reader's own starts (`startAt`), applied when each partition is assigned, before any fetch. */
  const sought = new Map<string, bigint>(
    (o.startAt ?? []).map((s) => [`${s.topic}/${s.partition}`, BigInt(s.offset)]),
  );
  let running = false;
  let joins = Promise.resolve();

  /**
   * One record at a time; when asked, the records whose handlers resolved are committed past
   * at the batch's end, or before a handler's failure is passed on (kafkajs' autoCommit after
   * each batch: one commit per batch, not per record).
   */
  async function records(
    h: Extract<TopicHandlers, { eachRecord: unknown }>,
    batch: FetchedBatch,
    control: LoopControl,
  ): Promise<void> {
    let done: string | null = null;
    try {
      for (const m of batch.messages) {
        if (control.isStale() || !running) return;
        await h.eachRecord(batch.topic, batch.partition, m);
        control.resolveOffset(m.offset);
        done = m.offset;
      }
    } finally {
      if (o.commitOffsets && done !== null && !control.isStale())
        await commit(batch.topic, batch.partition, BigInt(done) + 1n);
    }
  }

  /** The group's offset of the partition: `next`, the first record not yet handled. */
  async function commit(topic: string, partition: number, next: bigint): Promise<void> {
    await consumer.commit({ offsets: [{ topic, partition, offset: next, leaderEpoch: -1 }] });
  }

  /**
   * A Consumer of its own per topic for the fetches, never joined. With one Consumer fetching
   * for several topics at once, a second topic stayed unread for 8-10 s at a time (`tail all`
   * over a finished run: 11 s, against kafkajs' 1.2 s; one topic alone: 0.4 s); what inside
   * the library holds it back was not found. Apart, they read at once (0.5 s).
   */
  function fetcherOf(): Consumer {
    const fetcher = new Consumer({
      ...base,
      groupId: o.groupId,
      autocommit: false,
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
      maxBytes: MAX_BYTES,
      maxWaitTime: o.maxWaitMs,
    });
    fetchers.push(fetcher);
    return fetcher;
  }

  function loopOf(topic: string, h: TopicHandlers): FetchLoop {
    const source = consumerFetchSource(fetcherOf(), topic, {
      maxBytes: MAX_BYTES,
      maxBytesPerPartition: MAX_BYTES_PER_PARTITION,
      maxWaitMs: o.maxWaitMs,
    });
    return new FetchLoop(
      source,
      {
        topic,
        // As kafkajs' default (partitionsConsumedConcurrently 1).
        partitionsConcurrently: 1,
        onError: (e) => consumerLog.warn({ err: e, topic }, 'fetch failed; trying again'),
        onHandlerError: () => undefined,
        onFetched: () => h.fetched?.(),
        onPassed: (partition, lastOffset) => h.batchEnd?.(topic, partition, lastOffset),
      },
      async (batch, control) => {
        try {
          if ('eachRecord' in h) await records(h, batch, control);
          else {
            await h.eachBatch(batch);
            if (o.commitOffsets)
              await commit(batch.topic, batch.partition, BigInt(batch.lastOffset()) + 1n);
            control.resolveOffset(batch.lastOffset());
          }
        } catch (e) {
          // What was not resolved is read again, after a pause (kafkajs restarts the consumer).
          consumerLog.error(
            { err: e, topic, partition: batch.partition },
            'a handler failed; its records are read again',
          );
          await sleepers.sleep(FETCH_RETRY_MS);
          throw e;
        }
        if (running && !control.isStale())
          h.batchEnd?.(batch.topic, batch.partition, batch.lastOffset());
      },
    );
  }

  /** A join (the first, or the library's rejoin): revoked partitions go, new ones are placed. */
  function onJoin(): void {
    if (!running) return;
    const added = new Map<string, number[]>();
    for (const [topic, loop] of loops) {
      const now = topicPartitions(consumer.assignments, topic);
      const change = assignmentChange(assigned.get(topic) ?? [], now);
      assigned.set(topic, now);
      loop.remove(change.revoked);
      loop.add(change.added);
      for (const p of change.added) {
        const at = sought.get(`${topic}/${p}`);
        sought.delete(`${topic}/${p}`);
        if (at !== undefined) loop.seek(p, at);
      }
      added.set(topic, change.added);
    }
    joins = joins.then(() => place(added));
  }

  /** New partitions' first positions, tried again until read (a seek meanwhile wins). */
  async function place(added: ReadonlyMap<string, number[]>): Promise<void> {
    for (const [topic, partitions] of added) {
      const loop = loops.get(topic);
      while (running && loop !== undefined) {
        const waiting = partitions.filter((p) => loop.isOwned(p) && !loop.hasPosition(p));
        if (waiting.length === 0) break;
        try {
          const starts = await startPositions(admin, o.groupId, topic, waiting, o.fromBeginning);
          for (const [p, offset] of starts) loop.place(p, offset);
          break;
        } catch (e) {
          consumerLog.warn({ err: e, topic }, 'start offsets not read; trying again');
          await sleepers.sleep(FETCH_RETRY_MS);
        }
      }
    }
  }

  /** The library could not rejoin (it stops heartbeating): everything goes, then a new join. */
  async function rejoin(e: unknown): Promise<void> {
    consumerLog.error({ err: e }, 'the consumer left its group; joining again');
    for (const [topic, loop] of loops) loop.remove(assigned.get(topic) ?? []);
    assigned.clear();
    while (running) {
      await sleepers.sleep(FETCH_RETRY_MS);
      if (!running) break;
      try {
        await consumer.joinGroup(groupOptions);
        break;
      } catch {
        // Tried again after the pause, until it joins or the consumer stops.
      }
    }
  }

  return {
    async start(h) {
      running = true;
      for (const topic of o.topics) loops.set(topic, loopOf(topic, h));
      consumer.on('consumer:group:join', onJoin);
      // Without a listener, the library's `error` event would throw.
      consumer.on('error', (e: unknown) => void rejoin(e));
      for (const topic of o.topics) consumer.topics.track(topic);
      for (const loop of loops.values()) loop.start();
      await consumer.joinGroup(groupOptions);
      await joins;
    },

    /** Ends the loops (a handler in flight gets the session timeout), then leaves the group. */
    async stop() {
      if (!running) return;
      running = false;
      sleepers.wakeAll();
      await Promise.all([...loops.values()].map((loop) => loop.stop(sessionTimeout)));
      const closing = Promise.allSettled([
        consumer.close(true),
        ...fetchers.map((f) => f.close(true)),
        admin.disconnect(),
      ]);
      await settledWithin(closing, sessionTimeout, undefined);
    },
  };
}
