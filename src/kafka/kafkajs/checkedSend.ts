/**
 * Upstream: tulios/kafkajs#1303 (a retried produce request skips the brokers that already
 * answered, and the send resolves with a partition unsent; open). Applies to kafkajs 2.2.4.
 *
 * An acknowledged plain send for an idempotent (non-transactional) producer: the send of input
 * events by the client, `simulate` and the load producers of the cluster suite and the soak.
 *
 * kafkajs 2.2.4's retry of a partly failed send/sendBatch skips every broker that already
 * answered (tulios/kafkajs#1303): a partition whose leader moved onto such a broker is silently
 * not sent, yet the promise resolves. On a 3-node cluster 6–15 of ~2,400 input events were lost
 * per broker-fault scenario that way. The processor's transactions abort on it
 * (src/kafka/transaction.ts); a plain send cannot abort, so it sends what no result
 * acknowledged again, until every partition is acknowledged.
 */
import type { Message, Producer, TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';
import { errorClass } from '../../errors';
import { sleep } from '../../time';
import { pinPartitions, requestPartitions } from '../placement';
import { sendProblems, type SentPartition } from './partitionPerRequest';

/** Most sends of one request's messages (the first included) before giving up. */
export const MAX_SEND_ROUNDS = 5;

/** The pause before each re-send (kafkajs has refreshed its metadata after the failure). */
const RESEND_PAUSE_MS = 100;

/** What is left to send after one round's results. */
export interface Unsent {
  /**
   * Every message of a topic-partition that no result acknowledges, in request order, as a
   * request; empty when all are acknowledged. A partition's messages are all in or all out.
   */
  unsent: TopicMessages[];
  /** Topic-partitions (`topic/partition`) acknowledged more than once: written twice. */
  repeated: string[];
}

/**
 * The messages of `request` still unsent after `results` (kafkajs' per-partition answers), and
 * the partitions written twice. Only pinned messages (`partition` set) can be checked: others
 * are never selected. Pure.
 *
 * A partition is re-sent whole: kafkajs never sent it (its sequence number did not move), so
 * the re-send carries the same records under the same sequence, and a broker that did write them
 * after all recognises the batch as a duplicate.
 */
export function unsentMessages(
  request: readonly TopicMessages[],
  results: readonly SentPartition[],
): Unsent {
  const { missing, repeated } = sendProblems(request, results);
  const left = new Set(missing);
  const unsent: TopicMessages[] = [];
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
export function partitionsOf(request: readonly TopicMessages[]): string[] {
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
    readonly unsent: TopicMessages[],
    rounds: number,
  ) {
    super(
      `${partitions.join(', ')}: no broker acknowledged these messages after ${rounds} sends (kafkajs#1303 retries skip brokers that answered)`,
    );
  }
}

/** What a checked send did beyond the first produce request. */
export interface CheckedSendReport {
  /** Produce requests made (1: everything acknowledged at once). */
  rounds: number;
  /** Topic-partitions written twice (a kafkajs#1303 retry under a new sequence number). */
  repeated: string[];
}

export interface CheckedSendOptions {
  /** Partitions of every topic sent to: each message is pinned where kafkajs would put it. */
  partitionCounts: ReadonlyMap<string, number>;
  log: Pick<Logger, 'warn'>;
  maxRounds?: number;
}

/**
 * Sends `topicMessages` with acks = all and resolves once every message's partition is
 * acknowledged: the messages are pinned to their partitions (`pinPartitions`, in place), and
 * those of partitions no result acknowledges are sent again, whole, before this resolves (so
 * nothing newer from the caller overtakes them: per-partition order holds for a caller that
 * awaits each send). A partition acknowledged twice holds its records twice: the contract
 * absorbs redelivered events by eventId (contract §4 steps 0 and 1), so it is logged at warn,
 * not failed.
 * Throws UnacknowledgedSendError after `maxRounds` sends; kafkajs' own failures as they come.
 */
export async function checkedSend(
  producer: Producer,
  topicMessages: readonly TopicMessages[],
  o: CheckedSendOptions,
): Promise<CheckedSendReport> {
  for (const { topic } of topicMessages)
    if (!o.partitionCounts.has(topic))
      throw new Error(`checkedSend: no partition count for topic ${topic}`);
  pinPartitions(
    topicMessages.map(({ topic, messages }) => [topic, messages] as const),
    o.partitionCounts,
  );
  const maxRounds = o.maxRounds ?? MAX_SEND_ROUNDS;
  const repeatedAll: string[] = [];
  let request: TopicMessages[] = topicMessages.map(({ topic, messages }) => ({
    topic,
    messages: messages as Message[],
  }));
  for (let round = 1; ; round++) {
    const results = await producer.sendBatch({ acks: -1, topicMessages: request });
    const { unsent, repeated } = unsentMessages(request, results);
    if (repeated.length > 0) {
      o.log.warn(
        { partitions: repeated, round },
        'kafkajs#1303: a retried produce request wrote these topic-partitions twice (duplicated records; redeliveries are ignored by eventId)',
      );
      repeatedAll.push(...repeated);
    }
    if (unsent.length === 0) return { rounds: round, repeated: repeatedAll };
    const partitions = partitionsOf(unsent);
    if (round >= maxRounds) throw new UnacknowledgedSendError(partitions, unsent, round);
    o.log.warn(
      { partitions, round },
      'kafkajs#1303: a retried produce request skipped these topic-partitions (no acknowledgement): sending them again',
    );
    request = unsent;
    await sleep(RESEND_PAUSE_MS);
  }
}
