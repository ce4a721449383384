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
import type { Producer, TopicMessages } from 'kafkajs';
import {
  type AcknowledgedSendOptions,
  type AcknowledgedSendReport,
  sendUntilAcknowledged,
  type SendWords,
  unacknowledgedMessages,
  type Unsent,
} from '../acknowledgedSend';
import { acknowledged, type SentPartition } from './partitionPerRequest';

export { MAX_SEND_ROUNDS, partitionsOf, UnacknowledgedSendError } from '../acknowledgedSend';
export type { Unsent } from '../acknowledgedSend';

/**
 * The messages of `request` still unsent after `results` (kafkajs' per-partition answers), and
 * the partitions written twice (src/kafka/acknowledgedSend.ts). Only pinned messages
 * (`partition` set) can be checked: others are never selected. Pure.
 *
 * A partition is re-sent whole: kafkajs never sent it (its sequence number did not move), so
 * the re-send carries the same records under the same sequence, and a broker that did write them
 * after all recognises the batch as a duplicate.
 */
export function unsentMessages(
  request: readonly TopicMessages[],
  results: readonly SentPartition[],
): Unsent {
  return unacknowledgedMessages(request, acknowledged(results));
}

/** What a checked send did beyond the first produce request. */
export type CheckedSendReport = AcknowledgedSendReport;

export type CheckedSendOptions = AcknowledgedSendOptions;

/** How kafkajs' skipped and repeated partitions are told (kafkajs#1303). */
const KAFKAJS_WORDS: SendWords = {
  repeated:
    'kafkajs#1303: a retried produce request wrote these topic-partitions twice (duplicated records; redeliveries are ignored by eventId)',
  resending:
    'kafkajs#1303: a retried produce request skipped these topic-partitions (no acknowledgement): sending them again',
  why: 'kafkajs#1303 retries skip brokers that answered',
};

/**
 * Sends `topicMessages` with acks = all and resolves once every message's partition is
 * acknowledged (`sendUntilAcknowledged`: pinned in place, unacknowledged partitions re-sent
 * whole before this resolves, a partition acknowledged twice logged at warn). Throws
 * UnacknowledgedSendError after `maxRounds` sends; kafkajs' own failures as they come.
 */
export async function checkedSend(
  producer: Producer,
  topicMessages: readonly TopicMessages[],
  o: CheckedSendOptions,
): Promise<CheckedSendReport> {
  return sendUntilAcknowledged(
    topicMessages,
    async (request) => acknowledged(await producer.sendBatch({ acks: -1, topicMessages: request })),
    KAFKAJS_WORDS,
    o,
  );
}
