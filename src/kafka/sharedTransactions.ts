/**
 * One transactional producer for the whole process behind per-partition facades: each
 * partition task keeps "its" TransactionalProducer (PartitionTask, commitBatch and writeBarrier
 * are unchanged), but a facade's transaction only records its requests and offsets, and its
 * commit joins the next shared transaction (group commit): while one shared transaction is in
 * flight, commits queue, and all of them go into the next; when none is, the first starts one
 * at once. N partitions then cost one transaction, one coordinator round of markers and one
 * fencing barrier per process instead of N (Kafka Streams' move to one producer per thread,
 * KIP-447).
 *
 * Why a zombie is still fenced without one transactionalId per partition (docs/decisions.md
 * 209): with KIP-447 the transaction's offsets are committed with the group's generation and
 * member id, and the group coordinator refuses them (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID)
 * once the member lost its partitions in a rebalance. Every data transaction of a partition
 * carries that partition's offset, so a zombie's transaction cannot commit: its TxnOffsetCommit
 * fails and the whole transaction is aborted, records included. A zombie's transaction that
 * got its offsets in before the rebalance is still open on the changelog partition and holds
 * that partition's last stable offset; the new owner's barrier is read back under
 * read_committed, so its restore waits until that transaction ends, and sees its outcome.
 * Nothing of the zombie's can land after the new owner's restore, so a producer epoch per
 * partition is no longer what keeps it out.
 *
 * Transport-agnostic: it only uses the transport's TransactionalProducer.
 */
import type { Logger } from 'pino';
import { withTimeout } from '../time';
import { requestPartitions } from './placement';
import {
  ProducerFencedError,
  TransactionOutcomeUnknownError,
  type GroupMetadata,
  type NextOffset,
  type ProducerTransaction,
  type TopicRecords,
  type TransactionalProducer,
} from './transport';

export interface SharedTransactionsOptions {
  log?: Logger;
  /**
   * The most facade commits one shared transaction takes (the rest wait for the next): a
   * round then carries at most this many requests, each sized below its topic's limit, so its
   * Produce requests stay well below a broker's `socket.request.max.bytes`.
   */
  maxParticipants?: number;
  /**
   * A shared transaction not ended within this (beyond the transaction timeout: the
   * coordinator has aborted it unless it committed) is given up: its participants fail with
   * TransactionOutcomeUnknownError and the next transaction uses a new producer, whose epoch
   * fences whatever the old one still sends (as `commitWithin` does for one partition).
   * Omitted: no bound.
   */
  deadlineMs?: number;
}

/** Default `maxParticipants`: 32 requests of at most 768 KiB each is 24 MiB per round. */
export const MAX_PARTICIPANTS = 32;

/** One facade transaction that asked to commit: what it recorded, and how to answer it. */
interface Participant {
  readonly partition: number;
  /** When its commit joined the queue (performance.now()), for the debug log's queuedMs. */
  readonly joinedAt: number;
  readonly requests: readonly (readonly TopicRecords[])[];
  readonly offsets: readonly { offsets: readonly NextOffset[]; group: GroupMetadata }[];
  resolve(): void;
  reject(e: unknown): void;
}

/** What one participant's recorded requests are, for `sendRounds`. */
export type RecordedRequests = readonly (readonly TopicRecords[])[];

/**
 * The participants' requests as the shared transaction's sends: round k holds every
 * participant's k-th request, except that a topic-partition is never in one round twice (the
 * later request moves on to the first round after that has room for all its partitions),
 * and each participant's requests stay in their own order, each in a later round than the
 * one before. A request is never split, so each topic-partition's bytes in a round are one
 * request's, which its caller sized below the topic's limit. Pure.
 */
export function sendRounds(participants: readonly RecordedRequests[]): TopicRecords[][] {
  const rounds: { request: TopicRecords[]; partitions: Set<string> }[] = [];
  for (const requests of participants) {
    let next = 0;
    for (const request of requests) {
      const partitions = requestPartitions(request);
      if (partitions.size === 0) continue;
      let r = next;
      while (r < rounds.length && [...partitions].some((p) => rounds[r]!.partitions.has(p))) r++;
      if (r === rounds.length) rounds.push({ request: [], partitions: new Set() });
      const round = rounds[r]!;
      round.request.push(...request);
      for (const p of partitions) round.partitions.add(p);
      next = r + 1;
    }
  }
  return rounds.map((r) => r.request);
}

export class SharedTransactions {
  private producer: TransactionalProducer | null = null;
  private connecting: Promise<TransactionalProducer> | null = null;
  private readonly queue: Participant[] = [];
  private draining = false;
  private closed = false;
  private readonly maxParticipants: number;

  constructor(
    private readonly newProducer: () => TransactionalProducer,
    private readonly options: SharedTransactionsOptions = {},
  ) {
    this.maxParticipants = Math.max(1, options.maxParticipants ?? MAX_PARTICIPANTS);
  }

  /**
   * The producer `partition`'s task uses: `connect` connects the shared producer (once, for
   * every facade), `disconnect` only detaches this facade (later transactions of it fail), and
   * each transaction joins the next shared one at its commit.
   */
  forPartition(partition: number): TransactionalProducer {
    let attached = true;
    return {
      connect: async () => {
        if (!attached) throw new Error(`the producer of partition ${partition} was disconnected`);
        await this.connected();
      },
      disconnect: async () => {
        attached = false;
      },
      transaction: async () => {
        if (!attached) throw new Error(`the producer of partition ${partition} was disconnected`);
        return this.recording(partition);
      },
    };
  }

  /** The shared producer is disconnected; commits not yet begun fail. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new Error('the shared transactional producer was closed');
    for (const p of this.queue.splice(0)) p.reject(error);
    const producer = this.producer;
    this.producer = null;
    this.connecting = null;
    await producer?.disconnect();
  }

  /** A facade's transaction: sends and offsets recorded, the commit joining a shared one. */
  private recording(partition: number): ProducerTransaction {
    const requests: (readonly TopicRecords[])[] = [];
    const offsets: { offsets: readonly NextOffset[]; group: GroupMetadata }[] = [];
    let state: 'open' | 'committing' | 'aborted' = 'open';
    const whileOpen = (what: string) => {
      if (state !== 'open') throw new Error(`${what} on a transaction already ${state}`);
    };
    return {
      send: async (request) => {
        whileOpen('send');
        requests.push(request);
      },
      sendOffsets: async (o, group) => {
        whileOpen('sendOffsets');
        offsets.push({ offsets: o, group });
      },
      commit: () => {
        try {
          whileOpen('commit');
        } catch (e) {
          return Promise.reject(e);
        }
        state = 'committing';
        return this.join(partition, requests, offsets);
      },
      // Before its commit nothing of it was sent: dropping the records is the abort. After it,
      // the shared transaction it joined already committed or was aborted.
      abort: async () => {
        if (state === 'open') state = 'aborted';
      },
    };
  }

  private join(
    partition: number,
    requests: Participant['requests'],
    offsets: Participant['offsets'],
  ): Promise<void> {
    if (this.closed)
      return Promise.reject(new Error('the shared transactional producer was closed'));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({
        partition,
        joinedAt: performance.now(),
        requests,
        offsets,
        resolve,
        reject,
      });
      void this.drain();
    });
  }

  /**
   * Shared transactions one after another while commits wait. The flag is cleared in the same
   * turn as the last look at the queue, so a commit queued after it starts a new drain.
   */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.closed)
        await this.bounded(this.queue.splice(0, this.maxParticipants));
    } finally {
      this.draining = false;
    }
  }

  /** One shared transaction, given up after `deadlineMs` (see SharedTransactionsOptions). */
  private async bounded(participants: Participant[]): Promise<void> {
    const { deadlineMs } = this.options;
    const run = this.shared(participants);
    if (deadlineMs === undefined) return run;
    const gaveUp = () =>
      new TransactionOutcomeUnknownError(
        new Error(`the shared transaction did not end within ${deadlineMs} ms`),
      );
    await withTimeout(run, deadlineMs, gaveUp).catch((e: unknown) => {
      this.options.log?.warn({ err: e }, 'shared transaction given up; a new producer follows');
      this.replace(this.producer);
      for (const p of participants) p.reject(e);
    });
  }

  /**
   * begin; the sends in rounds (`sendRounds`), one at a time; each participant's offsets, one
   * after another; commit. Any failure aborts it (its own failure ignored: a new producer
   * fences it anyway) and fails every participant with the same error, its class kept, so that
   * commitBatch types it as for a producer of its own. A RecordTooLargeError reaches every
   * participant: the first task to see it lowers the topic's (shared) limit and plans its batch
   * again; for the others the limit is no news, so they resynchronise from the changelog,
   * where nothing of this transaction is.
   */
  private async shared(participants: Participant[]): Promise<void> {
    if (participants.every((p) => p.requests.length === 0 && p.offsets.length === 0)) {
      for (const p of participants) p.resolve();
      return;
    }
    const t = { start: performance.now(), begun: 0, sent: 0, offsetsSent: 0 };
    let producer: TransactionalProducer | null = null;
    let txn: ProducerTransaction;
    try {
      producer = await this.connected();
      txn = await producer.transaction();
    } catch (e) {
      this.failed(participants, e, producer, e instanceof ProducerFencedError);
      return;
    }
    try {
      t.begun = performance.now();
      const rounds = sendRounds(participants.map((p) => p.requests));
      for (const round of rounds) await txn.send(round);
      t.sent = performance.now();
      for (const p of participants)
        for (const o of p.offsets) await txn.sendOffsets(o.offsets, o.group);
      t.offsetsSent = performance.now();
      await txn.commit();
      this.logPhases(participants, rounds.length, t);
    } catch (e) {
      await txn.abort().catch(() => undefined);
      // Replaced whatever the failure: a send the broker refused (too large, say) leaves the
      // producer's sequence numbers ahead of what was written, and @platformatic/kafka does not
      // bump its epoch after an abort, so its next transaction would fail with
      // OUT_OF_ORDER_SEQUENCE_NUMBER (test/integration/poison.test.ts, the too-large case).
      this.failed(participants, e, producer, true);
      return;
    }
    for (const p of participants) p.resolve();
  }

  /**
   * Where a shared transaction's time went, at debug (bench/README.md, "Where a platformatic
   * commit waits"): the longest a participant queued before it began, then begin, the send
   * rounds, the offsets (one TxnOffsetCommit per participant), and the commit.
   */
  private logPhases(
    participants: Participant[],
    rounds: number,
    t: { start: number; begun: number; sent: number; offsetsSent: number },
  ): void {
    const log = this.options.log;
    if (log === undefined || !log.isLevelEnabled('debug')) return;
    const ms = (x: number) => Math.round(x * 10) / 10;
    log.debug(
      {
        participants: participants.length,
        rounds,
        queuedMs: ms(t.start - Math.min(...participants.map((p) => p.joinedAt))),
        beginMs: ms(t.begun - t.start),
        sendMs: ms(t.sent - t.begun),
        offsetsMs: ms(t.offsetsSent - t.sent),
        commitMs: ms(performance.now() - t.offsetsSent),
      },
      'shared transaction committed',
    );
  }

  private failed(
    participants: Participant[],
    e: unknown,
    producer: TransactionalProducer | null,
    replace: boolean,
  ) {
    this.options.log?.warn(
      { err: e, partitions: participants.map((p) => p.partition) },
      'shared transaction failed',
    );
    if (replace) this.replace(producer);
    for (const p of participants) p.reject(e);
  }

  /** The shared producer, made and connected once (concurrent callers share the wait). */
  private connected(): Promise<TransactionalProducer> {
    if (this.closed)
      return Promise.reject(new Error('the shared transactional producer was closed'));
    this.connecting ??= (async () => {
      this.producer ??= this.newProducer();
      const producer = this.producer;
      await producer.connect();
      return producer;
    })().catch((e: unknown) => {
      this.connecting = null;
      throw e;
    });
    return this.connecting;
  }

  /**
   * `old` (fenced, its transaction failed or given up) is dropped, not awaited: the next transaction
   * makes and connects a new producer. Only if it is still the current one: a transaction given
   * up may fail later, after its replacement is in use.
   */
  private replace(old: TransactionalProducer | null): void {
    if (old === null || old !== this.producer) return;
    this.producer = null;
    this.connecting = null;
    this.options.log?.info('shared transactional producer replaced');
    void old
      .disconnect()
      .catch((e: unknown) => this.options.log?.debug({ err: e }, 'old producer disconnect failed'));
  }
}
