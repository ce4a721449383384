/**
 * What a local cluster's readiness means, asked of the cluster itself through short-lived
 * kafkajs clients: nodes listed, partitions in sync, coordinators loaded.
 */
import { Kafka, logLevel } from '../../kafka/kafkajs';

/** Kafka's partition of a coordinator key: Utils.abs(key.hashCode()) % partitions (Java String hash). */
export function coordinatorPartition(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(31, h) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitions;
}

function client(brokers: string[]): Kafka {
  return new Kafka({
    clientId: 'services-cluster-readiness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
}

export async function listedBrokers(brokers: string[]): Promise<number[]> {
  const admin = client(brokers).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.map((b) => b.nodeId);
  } finally {
    await admin.disconnect();
  }
}

export async function healthy(
  brokers: string[],
  count: number,
  topics: string[],
): Promise<boolean> {
  const admin = client(brokers).admin();
  try {
    await admin.connect();
    if ((await admin.describeCluster()).brokers.length < count) return false;
    if (topics.length === 0) return true;
    const meta = await admin.fetchTopicMetadata({ topics });
    return meta.topics.every((t) =>
      t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length),
    );
  } finally {
    await admin.disconnect();
  }
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
  const kafka = client(brokers);
  const admin = kafka.admin();
  const keys: string[] = [];
  for (let i = 0; keys.length < partitions; i++) {
    const key = `services-readiness-${i}`;
    if (coordinatorPartition(key, partitions) === keys.length) keys.push(key);
  }
  const producers = keys.map((transactionalId) =>
    kafka.producer({
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 1, initialRetryTime: 100 },
    }),
  );
  try {
    await admin.connect();
    if ((await admin.describeCluster()).brokers.length < count) return false;
    await admin.describeGroups(keys);
    for (const p of producers) await p.connect();
    return true;
  } finally {
    for (const p of producers) await p.disconnect();
    await admin.disconnect();
  }
}
