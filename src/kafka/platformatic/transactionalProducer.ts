/**
 * The transport's transactional producer (src/kafka/transport/producer.ts) on
 * @platformatic/kafka 2.12.1, following what the probes proved on a real broker
 * (bench/probes/platformatic/README.md):
 * - constructed with `producerId: -1n, producerEpoch: -1`: the client's default (0, 0) makes
 *   a restarted transactionalId fail with PRODUCER_FENCED (gap1);
 * - one library call in flight at a time: two concurrent `send()`s leave the second's
 *   partitions out of the transaction, two concurrent `addOffset()`s drop the second offset
 *   silently (gap2, gap4). The transport's contract already has one step at a time; this
 *   adapter relies on it and makes each `send(request)` exactly one library send;
 * - offsets from a Message-shaped object carrying the group's generation and member id, so
 *   that the coordinator refuses a member that lost its partitions (KIP-447; gap4 step 4);
 * - after a fencing error the library producer stays "in a transaction" for good, so it is
 *   closed and every later call fails with ProducerFencedError until the caller makes another
 *   (when the group refused the member's offsets, the producer itself is still valid: the
 *   caller's abort runs first, so the transaction ends now rather than at its timeout).
 * The transaction timeout is the client's generic `timeout` (also the Produce acks timeout).
 */
import {
  Producer,
  connectionsApiChannel,
  protocolAPIsById,
  type BaseOptions,
  type Consumer,
  type Message,
} from '@platformatic/kafka';
import { ProducerFencedError, RecordTooLargeError } from '../transport/errors';
import type {
  GroupMetadata,
  NextOffset,
  ProducerTransaction,
  TransactionalProducer,
  TransactionalProducerOptions,
} from '../transport/producer';
import type { TopicRecords } from '../transport/records';
import {
  fencingErrorType,
  isGroupFencing,
  isRecordTooLarge,
  tooLargePartition,
} from './errorTypes';
import { requestPartitions } from '../placement';
import { libraryMessages, recordsOf, type LibraryMessage } from './producedMessages';
import { transactionalRetryDelay } from './retryDelay';

type LibraryProducer = Producer<Buffer | undefined, Buffer | null, Buffer, Buffer>;
/** The library's transaction class is not exported from its index: its type, from the getter. */
type LibraryTransaction = NonNullable<LibraryProducer['transaction']>;

/**
 * Not a protocol error: a library transaction neither committed nor aborted (its abort failed
 * too) is still open on the coordinator, and beginning another on the same producer would add
 * to it. Only a new producer (its InitProducerId aborts it) may go on.
 */
export const UNFINISHED_TRANSACTION = 'UNFINISHED_TRANSACTION';

export function platformaticTransactionalProducer(
  base: BaseOptions,
  o: TransactionalProducerOptions,
  consumerOf: (groupId: string) => Consumer | undefined,
): TransactionalProducer {
  const producer: LibraryProducer = new Producer({
    ...base,
    transactionalId: o.transactionalId,
    idempotent: true,
    producerId: -1n,
    producerEpoch: -1,
    timeout: o.transactionTimeoutMs,
    retryDelay: transactionalRetryDelay(o.retryMs),
    autocreateTopics: false,
  });
  const unsubscribe =
    o.onRequest === undefined ? () => undefined : traceRequests(producer, o.onRequest);
  return new FencedOnce(producer, consumerOf, unsubscribe);
}

/**
 * Each request of `producer`'s connections with its duration, from the client's
 * `plt:kafka:connections:api` tracing channel (process-wide, so filtered by the connection's
 * owner): from the request's start to its answer (asyncStart). A request that never gets one
 * (timed out, connection lost) is not reported. Returns the unsubscription.
 */
function traceRequests(
  producer: LibraryProducer,
  onRequest: (api: string, ms: number) => void,
): () => void {
  const started = new WeakMap<object, number>();
  const ours = (ctx: unknown) =>
    (ctx as { connection?: { ownerId?: unknown } }).connection?.ownerId === producer.instanceId;
  const start = (ctx: unknown) => {
    if (ours(ctx)) started.set(ctx as object, performance.now());
  };
  const answered = (ctx: unknown) => {
    const t0 = started.get(ctx as object);
    if (t0 === undefined) return;
    started.delete(ctx as object);
    const { apiKey } = ctx as { apiKey: number };
    onRequest(protocolAPIsById[apiKey] ?? String(apiKey), performance.now() - t0);
  };
  connectionsApiChannel.start.subscribe(start);
  connectionsApiChannel.asyncStart.subscribe(answered);
  return () => {
    connectionsApiChannel.start.unsubscribe(start);
    connectionsApiChannel.asyncStart.unsubscribe(answered);
  };
}

/** The library producer until it is fenced; after that, ProducerFencedError for everything. */
class FencedOnce implements TransactionalProducer {
  private fenced: ProducerFencedError | null = null;
  private connecting: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly producer: LibraryProducer,
    private readonly consumerOf: (groupId: string) => Consumer | undefined,
    private readonly unsubscribe: () => void,
  ) {}

  /**
   * FindCoordinator and InitProducerId, as the first transaction would do them, so that the
   * previous producer of the transactionalId is fenced (and its open transaction aborted) now:
   * a transaction begun and cancelled locally (nothing reaches the coordinator but the init).
   */
  connect(): Promise<void> {
    this.connecting ??= this.guarded(async () => {
      await this.producer.beginTransaction();
      await this.producer.transaction?.cancel();
    }).catch((e: unknown) => {
      this.connecting = null;
      throw e;
    });
    return this.connecting;
  }

  disconnect(): Promise<void> {
    this.closing ??= this.close();
    return this.closing;
  }

  async transaction(): Promise<ProducerTransaction> {
    this.throwIfFenced();
    const open = this.producer.transaction;
    if (open !== undefined && !open.completed)
      throw this.fence(
        new ProducerFencedError(UNFINISHED_TRANSACTION, new Error('a transaction is still open')),
      );
    await this.guarded(() => this.producer.beginTransaction());
    const txn = this.producer.transaction;
    if (txn === undefined) throw new Error('beginTransaction resolved without a transaction');
    return this.transactionOf(txn);
  }

  private transactionOf(txn: LibraryTransaction): ProducerTransaction {
    const groupsAdded = new Set<string>();
    /** A refused offset commit: the producer goes once the caller's abort has run. */
    let fencedAfterAbort: ProducerFencedError | null = null;
    /**
     * Whether the coordinator may know of the transaction (a partition or a group asked for):
     * one it cannot know is ended locally, since its EndTxn would be refused
     * (INVALID_TXN_STATE, which would fence the producer for nothing).
     */
    let touched = false;
    return {
      send: (request) =>
        this.guarded(() => {
          touched ||= request.some((r) => r.messages.length > 0);
          return this.send(txn, request);
        }, request),
      sendOffsets: (offsets, group) =>
        this.guarded(async () => {
          const consumer = this.consumerOf(group.groupId);
          if (consumer === undefined)
            throw new Error(`no consumer of group ${group.groupId} to commit offsets for`);
          if (!groupsAdded.has(group.groupId)) {
            touched = true;
            await txn.addConsumer(consumer);
            groupsAdded.add(group.groupId);
          }
          // One at a time: concurrent addOffset calls share the first one's request (gap4).
          for (const o of offsets) await txn.addOffset(offsetMessage(o, group, consumer));
        }).catch((e: unknown) => {
          if (e instanceof ProducerFencedError && isGroupFencing(e.type)) fencedAfterAbort = e;
          throw e;
        }),
      commit: () => this.guarded(() => (touched ? txn.commit() : txn.cancel())),
      abort: async () => {
        // The group refused the member, not the producer: its transaction can still be
        // aborted (at once, rather than by the coordinator after the transaction timeout).
        if (fencedAfterAbort !== null) {
          await txn.abort().finally(() => this.fence(fencedAfterAbort!));
          return;
        }
        await this.guarded(() => (touched ? txn.abort() : txn.cancel()));
      },
    };
  }

  /** One library send of the whole request; every topic-partition it carried acknowledged once. */
  private async send(txn: LibraryTransaction, request: readonly TopicRecords[]): Promise<void> {
    const messages: LibraryMessage[] = libraryMessages(request);
    if (messages.length === 0) return;
    const { offsets = [] } = await txn.send({ messages });
    const sent = requestPartitions(request);
    const acked = offsets.map((r) => `${r.topic}/${r.partition}`);
    if (acked.length !== sent.size || !acked.every((p) => sent.has(p)))
      throw new Error(
        `a produce request for ${[...sent].join(', ')} was acknowledged for ${acked.join(', ') || 'none'}: aborting the transaction`,
      );
  }

  /**
   * `step`, its failure typed: fencing (the producer is closed, and fenced for good unless the
   * group refused the member: see `abort`), too large (with the refused partition's records
   * of `request`), or as it is.
   */
  private async guarded<T>(step: () => Promise<T>, request?: readonly TopicRecords[]): Promise<T> {
    this.throwIfFenced();
    try {
      return await step();
    } catch (e) {
      throw this.typed(e, request);
    }
  }

  private typed(e: unknown, request?: readonly TopicRecords[]): unknown {
    if (e instanceof ProducerFencedError) return e;
    const type = fencingErrorType(e);
    if (type !== null) {
      const fenced = new ProducerFencedError(type, e);
      return isGroupFencing(type) ? fenced : this.fence(fenced);
    }
    if (request !== undefined && isRecordTooLarge(e)) {
      const at = tooLargePartition(e);
      const first = request[0];
      // Without the broker's response (not expected), the request's first topic stands for it.
      if (at !== null)
        return new RecordTooLargeError(at.topic, recordsOf(request, at.topic, at.partition), e);
      if (first !== undefined) return new RecordTooLargeError(first.topic, first.messages, e);
    }
    return e;
  }

  private throwIfFenced(): void {
    if (this.fenced !== null) throw this.fenced;
  }

  /** From now on every call fails with `e`; the library producer is closed (not awaited here). */
  private fence(e: ProducerFencedError): ProducerFencedError {
    if (this.fenced === null) {
      this.fenced = e;
      void this.disconnect().catch(() => undefined);
    }
    return this.fenced;
  }

  private async close(): Promise<void> {
    this.unsubscribe();
    await this.producer.close(true);
  }
}

/**
 * The Message-shaped object the library's `addOffset` reads: the partition, the offset of the
 * last record processed (it commits `offset + 1n`), and the group's generation and member id,
 * which the coordinator checks (KIP-447), with the consumer's group coordinator to send it to.
 */
function offsetMessage(o: NextOffset, group: GroupMetadata, consumer: Consumer): Message {
  const { generationId, memberId } = group;
  const { coordinatorId } = consumer;
  if (generationId === null || memberId === null || coordinatorId === null)
    throw new Error(
      `no generation, member or coordinator of group ${group.groupId} to commit offsets with`,
    );
  const consumerMetadata = { groupId: group.groupId, generationId, memberId, coordinatorId };
  const shaped = {
    topic: o.topic,
    partition: o.partition,
    offset: BigInt(o.offset) - 1n,
    metadata: { consumer: consumerMetadata },
  };
  return shaped as unknown as Message;
}
