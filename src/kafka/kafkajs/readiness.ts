/**
 * The local services' readiness probe (src/kafka/transport/readiness.ts) on kafkajs. The
 * coordinators are asked the way the processor will use them, because kafkajs 2.2.4 does not
 * retry COORDINATOR_LOAD_IN_PROGRESS for TxnOffsetCommit: a transaction's sendOffsets against a
 * warming broker fails, so the services wait until both coordinators answer.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { ProbeCluster } from '../transport/readiness';

export const kafkajsProbeCluster: ProbeCluster = async (o, ask) => {
  const kafka = new Kafka({
    clientId: o.clientId,
    brokers: o.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: o.connectionTimeoutMs,
    ...(o.requestTimeoutMs !== undefined ? { requestTimeout: o.requestTimeoutMs } : {}),
    retry: { retries: 0 }, // the caller polls the whole check
  });
  const admin = kafka.admin();
  const producers: Producer[] = [];
  try {
    await admin.connect();
    return await ask({
      brokerIds: async () => (await admin.describeCluster()).brokers.map((b) => b.nodeId),
      listTopics: () => admin.listTopics(),
      inSync: async (topics) =>
        (await admin.fetchTopicMetadata({ topics })).topics.every((t) =>
          t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length),
        ),
      describeGroups: async (groupIds) => {
        await admin.describeGroups(groupIds);
      },
      initTransactions: async (transactionalIds) => {
        for (const transactionalId of transactionalIds) {
          const producer = kafka.producer({
            transactionalId,
            idempotent: true,
            maxInFlightRequests: 1,
            retry: { retries: 1, initialRetryTime: 100 }, // kafkajs refuses idempotence with 0 retries
          });
          producers.push(producer);
          await producer.connect();
        }
      },
    });
  } finally {
    for (const p of producers) await p.disconnect();
    await admin.disconnect();
  }
};
