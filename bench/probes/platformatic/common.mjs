// Shared helpers for the @platformatic/kafka probes (bench/probes/platformatic/README.md). Node >= 22.22:
//   npx node bench/probes/platformatic/<probe>.mjs (npx runs the repository's own Node 22)
import { readFileSync } from 'node:fs';
import { Admin, FetchIsolationLevels, ListOffsetTimestamps } from '@platformatic/kafka';

export const SERVICES_FILE = process.env.PROBE_SERVICES ?? '.cache/embedded.json';

export function brokers() {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS.split(',');
  return JSON.parse(readFileSync(SERVICES_FILE, 'utf8')).brokers;
}

export const RUN = process.env.PROBE_RUN ?? `${Date.now().toString(36)}`;

export function log(...args) {
  console.log(`[${new Date().toISOString().slice(11, 23)}]`, ...args);
}

/** Flatten an error (MultipleErrors / AggregateError / cause chains) into one line per node. */
export function describeError(err, depth = 0, out = []) {
  if (!err || depth > 8) return out;
  const pad = '  '.repeat(depth);
  const fields = [];
  for (const k of [
    'name',
    'code',
    'apiId',
    'apiCode',
    'canRetry',
    'producerFenced',
    'needsRejoin',
    'serverErrorMessage',
    'path',
    'type',
    'retriable',
  ]) {
    if (err[k] !== undefined && err[k] !== null)
      fields.push(`${k}=${typeof err[k] === 'string' ? err[k] : JSON.stringify(err[k])}`);
  }
  out.push(`${pad}- ${fields.join(' ')} :: ${String(err.message).split('\n')[0]}`);
  if (Array.isArray(err.errors)) for (const e of err.errors) describeError(e, depth + 1, out);
  if (err.cause) describeError(err.cause, depth + 1, out);
  return out;
}

export function printError(label, err) {
  console.log(`${label}: ERROR`);
  for (const line of describeError(err)) console.log(`    ${line}`);
}

/** Summarise the distinct protocol error ids anywhere in an error tree. */
export function apiIds(err, acc = new Set()) {
  if (!err) return acc;
  if (err.apiId) acc.add(`${err.apiId}(${err.apiCode})`);
  if (Array.isArray(err.errors)) for (const e of err.errors) apiIds(e, acc);
  if (err.cause) apiIds(err.cause, acc);
  return acc;
}

/** `configs`: topic settings, `[{ name, value }]`. */
export async function createTopic(name, partitions = 1, configs = []) {
  const admin = new Admin({ clientId: 'probe-admin', bootstrapBrokers: brokers() });
  try {
    await admin.createTopics({ topics: [name], partitions, replicas: 1, configs });
    // wait for metadata to show leaders
    for (let i = 0; i < 50; i++) {
      try {
        const md = await admin.metadata({ topics: [name] });
        const t = md.topics.get(name);
        if (t && t.partitions.every((p) => p.leader >= 0)) break;
      } catch {
        /* retry */
      }
      await sleep(100);
    }
  } finally {
    await admin.close();
  }
}

/** High watermark (read_uncommitted) and last stable offset (read_committed) per partition. */
export async function offsets(topic, partitions) {
  const admin = new Admin({ clientId: 'probe-admin', bootstrapBrokers: brokers() });
  try {
    const out = {};
    for (const [name, level] of [
      ['HW', FetchIsolationLevels.READ_UNCOMMITTED],
      ['LSO', FetchIsolationLevels.READ_COMMITTED],
    ]) {
      const res = await admin.listOffsets({
        topics: [
          {
            name: topic,
            partitions: Array.from({ length: partitions }, (_, i) => ({
              partitionIndex: i,
              timestamp: ListOffsetTimestamps.LATEST,
            })),
          },
        ],
        isolationLevel: level,
      });
      out[name] = res[0].partitions
        .sort((a, b) => a.partitionIndex - b.partitionIndex)
        .map((p) => `p${p.partitionIndex}=${p.offset}`)
        .join(',');
    }
    return out;
  } finally {
    await admin.close();
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function withTimeout(promise, ms, label) {
  let t;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise((_, rej) => {
      t = setTimeout(() => rej(new Error(`probe timeout after ${ms} ms: ${label}`)), ms);
    }),
  ]);
}

/** Settle a promise into {ok, value|error} and print it. */
export async function attempt(label, fn, ms = 30000) {
  try {
    const value = await withTimeout(Promise.resolve().then(fn), ms, label);
    console.log(`${label}: OK${value !== undefined ? ' ' + fmt(value) : ''}`);
    return { ok: true, value };
  } catch (error) {
    printError(label, error);
    return { ok: false, error };
  }
}

export function fmt(v) {
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

/** Read a topic from the start with kafkajs and count records per partition and per value tag. */
export async function readWithKafkajs(
  topic,
  {
    readUncommitted,
    maxBytesPerPartition = 1048576,
    maxBytes = 10485760,
    idleMs = 4000,
    limitMs = 30000,
    classify = () => 'all',
  } = {},
) {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({
    clientId: 'probe-kjs',
    brokers: brokers(),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({
    groupId: `probe-kjs-${topic}-${readUncommitted ? 'ru' : 'rc'}-${Date.now()}`,
    readUncommitted,
    maxBytesPerPartition,
    maxBytes,
    maxWaitTimeInMs: 200,
  });
  const counts = {};
  let last = Date.now() + 6000; // allow for the group join before the first record
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const start = Date.now();
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      last = Date.now();
      const k = `p${partition}:${classify(message.value?.toString())}`;
      counts[k] = (counts[k] ?? 0) + 1;
    },
  });
  while (Date.now() - last < idleMs && Date.now() - start < limitMs) await sleep(200);
  await consumer.disconnect();
  return counts;
}
