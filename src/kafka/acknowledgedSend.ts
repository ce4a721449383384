/**
 * A plain (non-transactional) send acknowledged partition by partition, for any Kafka client:
 * what the client and `simulate` write input events with (PlainProducer,
 * src/kafka/transport/producer.ts). Every record is pinned to its partition first
 * (src/kafka/placement.ts), so each produce request's answers can be compared with what it
 * carried: a partition no answer acknowledges is sent again, whole, and one acknowledged twice
 * is reported. Each client gives its one produce request (`SendOnce`) and the words of its
 * warnings: kafkajs' retries can leave a partition unsent (src/kafka/kafkajs/checkedSend.ts),
 * @platformatic/kafka's are checked the same way (src/kafka/platformatic/plainProducer.ts).
 */
import type { Logger } from 'pino';
import { errorClass } from '../errors';
import { sleep } from '../time';
import { pinPartitions, requestPartitions } from './placement';
import type { TopicRecords } from './transport/records';

/** Most sends of one request's messages (the first included) before giving up. */
export const MAX_SEND_ROUNDS = 5;

/** The pause before each re-send (the client has refreshed its metadata after the failure). */
const RESEND_PAUSE_MS = 100;

/** One topic-partition a produce answer acknowledged. */
export interface Acknowledged {
  topic: string;
  partition: number;
}

/**
 * Topic-partitions (`topic/partition`) a request carried pinned records for that no answer
 * acknowledges, and those acknowledged more than once. Unpinned records are never missing:
 * nothing exact can be checked of them. Pure.
 */
export function acknowledgementProblems(
  request: readonly { topic: string; messages: readonly { partition?: number }[] }[],
  acked: readonly Acknowledged[],
): { missing: string[]; repeated: string[] } {
  const times = new Map<string, number>();
  for (const a of acked) {
    const key = `${a.topic}/${a.partition}`;
    times.set(key, (times.get(key) ?? 0) + 1);
  }
  const pinned = request.map(({ topic, messages }) => ({
    topic,
    messages: messages.filter((m) => m.partition !== undefined),
  }));
  const missing = [...requestPartitions(pinned)].filter((key) => !times.has(key));
  const repeated = [...times].filter(([, n]) => n > 1).map(([key]) => key);
  return { missing, repeated };
}

/** What is left to send after one round's answers. */
export interface Unsent {
  /**
   * Every message of a topic-partition that no answer acknowledges, in request order, as a
   * request; empty when all are acknowledged. A partition's messages are all in or all out.
   */
  unsent: TopicRecords[];
  /** Topic-partitions (`topic/partition`) acknowledged more than once: written twice. */
  repeated: string[];
}

/**
 * The messages of `request` still unsent after the answers `acked`, and the partitions written
 * twice. A partition is re-sent whole: the client never wrote it, so the re-send carries the
 * same records; one a broker did write after all is a redelivery, which the contract absorbs
 * by eventId (contract §4 steps 0 and 1). Pure.
 */
export function unacknowledgedMessages(
  request: readonly TopicRecords[],
  acked: readonly Acknowledged[],
): Unsent {
  const { missing, repeated } = acknowledgementProblems(request, acked);
  const left = new Set(missing);
  const unsent: TopicRecords[] = [];
  if (left.size > 0)
    for (const { topic, messages } of request) {
      const still = messages.filter(
        (m) => m.partition !== undefined && left.has(`${topic}/${m.partition}`),
      );
      if (still.length > 0) unsent.push({ topic, messages: still });
    }
  return { unsent, repeated };
}

/** Topic-partitions (`topic/partition`) a request carries messages for. Pure. */
export function partitionsOf(
  request: readonly { topic: string; messages: readonly { partition?: number }[] }[],
): string[] {
  return [...requestPartitions(request)];
}

/** Some partitions' messages stayed unacknowledged after `MAX_SEND_ROUNDS` sends. */
export class UnacknowledgedSendError extends errorClass(
  'KAFKA_SEND_UNACKNOWLEDGED',
  'UnacknowledgedSendError',
) {
  constructor(
    /** The topic-partitions still unacknowledged. */
    readonly partitions: string[],
    /** Their messages (pinned), in order: what to send again. */
    readonly unsent: TopicRecords[],
    rounds: number,
    /** Why a client may leave them unacknowledged, for the message. */
    why = 'kafkajs#1303 retries skip brokers that answered',
  ) {
    super(
      `${partitions.join(', ')}: no broker acknowledged these messages after ${rounds} sends (${why})`,
    );
  }
}

/** What an acknowledged send did beyond the first produce request. */
export interface AcknowledgedSendReport {
  /** Produce requests made (1: everything acknowledged at once). */
  rounds: number;
  /** Topic-partitions written twice. */
  repeated: string[];
}

/** One produce request with acks = all, and the topic-partitions its answers acknowledged. */
export type SendOnce = (request: TopicRecords[]) => Promise<Acknowledged[]>;

/** How a client words what it may do wrong (its warnings and its error). */
export interface SendWords {
  /** Logged at warn with the partitions written twice. */
  repeated: string;
  /** Logged at warn with the partitions about to be sent again. */
  resending: string;
  /** UnacknowledgedSendError's reason. */
  why: string;
}

export interface AcknowledgedSendOptions {
  /** Partitions of every topic sent to: each message is pinned where Kafka's partitioner puts it. */
  partitionCounts: ReadonlyMap<string, number>;
  log: Pick<Logger, 'warn'>;
  maxRounds?: number;
}

/**
 * Sends `request` through `sendOnce` and resolves once every message's partition is
 * acknowledged: the messages are pinned to their partitions (`pinPartitions`, in place), and
 * those of partitions no answer acknowledges are sent again, whole, before this resolves (so
 * nothing newer from the caller overtakes them: per-partition order holds for a caller that
 * awaits each send). A partition acknowledged twice is logged at warn, not failed.
 * Throws UnacknowledgedSendError after `maxRounds` sends; the client's own failures as they come.
 */
export async function sendUntilAcknowledged(
  request: readonly TopicRecords[],
  sendOnce: SendOnce,
  words: SendWords,
  o: AcknowledgedSendOptions,
): Promise<AcknowledgedSendReport> {
  for (const { topic } of request)
    if (!o.partitionCounts.has(topic))
      throw new Error(`acknowledged send: no partition count for topic ${topic}`);
  pinPartitions(
    request.map(({ topic, messages }) => [topic, messages] as const),
    o.partitionCounts,
  );
  const maxRounds = o.maxRounds ?? MAX_SEND_ROUNDS;
  const repeatedAll: string[] = [];
  let left: TopicRecords[] = request.map(({ topic, messages }) => ({ topic, messages }));
  for (let round = 1; ; round++) {
    const { unsent, repeated } = unacknowledgedMessages(left, await sendOnce(left));
    if (repeated.length > 0) {
      o.log.warn({ partitions: repeated, round }, words.repeated);
      repeatedAll.push(...repeated);
    }
    if (unsent.length === 0) return { rounds: round, repeated: repeatedAll };
    const partitions = partitionsOf(unsent);
    if (round >= maxRounds) throw new UnacknowledgedSendError(partitions, unsent, round, words.why);
    o.log.warn({ partitions, round }, words.resending);
    left = unsent;
    await sleep(RESEND_PAUSE_MS);
  }
}
