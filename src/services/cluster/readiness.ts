/**
 * What a local cluster's readiness means, asked of the cluster itself through short-lived
 * clients (src/kafka/transport/readiness.ts): nodes listed, partitions in sync, coordinators
 * loaded.
 */
import { kafkajsProbeCluster } from '../../kafka/kafkajs';
import type { ReadinessProbe } from '../../kafka/transport/readiness';

/** Kafka's partition of a coordinator key: Utils.abs(key.hashCode()) % partitions (Java String hash). */
export function coordinatorPartition(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(31, h) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitions;
}

/** Asks the cluster at `brokers` on one short-lived connection (the caller polls). */
function probe<T>(brokers: string[], ask: (cluster: ReadinessProbe) => Promise<T>): Promise<T> {
  return kafkajsProbeCluster(
    {
      clientId: 'services-cluster-readiness',
      brokers,
      connectionTimeoutMs: 1_000,
      requestTimeoutMs: 5_000,
    },
    ask,
  );
}

export function listedBrokers(brokers: string[]): Promise<number[]> {
  return probe(brokers, (cluster) => cluster.brokerIds());
}

export function healthy(brokers: string[], count: number, topics: string[]): Promise<boolean> {
  return probe(brokers, async (cluster) => {
    if ((await cluster.brokerIds()).length < count) return false;
    if (topics.length === 0) return true;
    return cluster.inSync(topics);
  });
}

/**
 * Every node registered, and the group and transaction coordinators of every partition of the
 * internal topics loaded (a key per partition): kafkajs does not retry LOAD_IN_PROGRESS for
 * TxnOffsetCommit, so tests must not meet the warm-up (see localKafka.ts `isReady`).
 */
export async function clusterReady(
  brokers: string[],
  count: number,
  partitions: number,
): Promise<boolean> {
  const keys: string[] = [];
  for (let i = 0; keys.length < partitions; i++) {
    const key = `services-readiness-${i}`;
    if (coordinatorPartition(key, partitions) === keys.length) keys.push(key);
  }
  return probe(brokers, async (cluster) => {
    if ((await cluster.brokerIds()).length < count) return false;
    await cluster.describeGroups(keys);
    await cluster.initTransactions(keys);
    return true;
  });
}
