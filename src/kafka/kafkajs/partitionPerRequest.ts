/**
 * Upstream: tulios/kafkajs#1303 (a retried produce request skips the brokers that already
 * answered; open, and the fix proposed in kafkajs#1798 is not released). Applies to kafkajs 2.2.4.
 *
 * Produce requests shaped and checked so that #1303 cannot go unseen: every message pinned to
 * the partition Kafka's default partitioner would choose (`pinPartitions`), a transaction's requests sent one
 * topic-partition each (`onePartitionEach`, `sendPartitionByPartition`), and each request's
 * results compared with what it carried (`sendProblems`).
 */
import type { TopicMessages, Transaction } from 'kafkajs';
import { type Acknowledged, acknowledgementProblems } from '../acknowledgedSend';

/**
 * A request's messages as one request per topic-partition, in their order. kafkajs 2.2.4 sends
 * a request's partitions to their leaders in parallel and retries as soon as one leader fails,
 * while another leader's produce may still be in flight: that produce then completes, and the
 * retry, having seen no answer from its broker yet, sends the same messages to it again under
 * the next sequence numbers. Both land in the one transaction, and only the later answer is
 * kept, so `sendProblems` cannot see it (seen in the soak: a spill request at two adjacent
 * offsets from one producer epoch, its verdict once). With one partition per request there is
 * no other leader to fail: a retry re-sends under the same sequence numbers, which the broker
 * deduplicates. Messages must be pinned (`pinPartitions`); unpinned ones stay together. Pure.
 */
export function onePartitionEach(request: readonly TopicMessages[]): TopicMessages[][] {
  const parts = new Map<string, TopicMessages>();
  for (const { topic, messages } of request)
    for (const m of messages) {
      const key = `${topic}/${m.partition ?? '?'}`;
      let part = parts.get(key);
      if (part === undefined) {
        part = { topic, messages: [] };
        parts.set(key, part);
      }
      part.messages.push(m);
    }
  return [...parts.values()].map((part) => [part]);
}

/** What kafkajs' sendBatch answers per partition (the part the check needs). */
export interface SentPartition {
  topicName: string;
  partition: number;
}

/**
 * What is wrong with a request's send results: topic-partitions it carried messages for that no
 * result acknowledges, and topic-partitions acknowledged more than once. kafkajs 2.2.4's retry
 * of a partly failed sendBatch skips every broker that already answered (tulios/kafkajs#1303):
 * a partition whose leader moved to such a broker is silently not sent (lost), and one that
 * moved from such a broker to another is sent again under a new sequence number (duplicated).
 * Seen on a 3-node cluster when a leader was killed; either way the transaction must abort.
 * Messages are given their partition before sending (`pinPartitions`), so this is exact. Pure.
 */
export function sendProblems(
  request: readonly TopicMessages[],
  results: readonly SentPartition[],
): { missing: string[]; repeated: string[] } {
  return acknowledgementProblems(request, acknowledged(results));
}

/** kafkajs' answers as the topic-partitions they acknowledge. Pure. */
export function acknowledged(results: readonly SentPartition[]): Acknowledged[] {
  return results.map((r) => ({ topic: r.topicName, partition: r.partition }));
}

/**
 * Sends one request of an open transaction, one topic-partition per sendBatch
 * (`onePartitionEach`), each acknowledged exactly once or the send fails: a failed sendBatch
 * throws `onError(e, its messages)`; results that leave a partition unwritten or write it twice
 * throw, so that the caller aborts the transaction.
 */
export async function sendPartitionByPartition(
  txn: Pick<Transaction, 'sendBatch'>,
  request: readonly TopicMessages[],
  onError: (e: unknown, sent: TopicMessages) => unknown = (e) => e,
): Promise<void> {
  for (const topicMessages of onePartitionEach(request)) {
    const results = await txn.sendBatch({ acks: -1, topicMessages }).catch((e: unknown) => {
      const [sent] = topicMessages;
      throw sent ? onError(e, sent) : e;
    });
    const { missing, repeated } = sendProblems(topicMessages, results);
    if (missing.length > 0 || repeated.length > 0)
      throw new Error(
        `a retried produce request (kafkajs#1303) left ${missing.join(', ') || 'none'} unwritten and wrote ${repeated.join(', ') || 'none'} twice: aborting the transaction`,
      );
  }
}
