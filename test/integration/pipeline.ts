/** Test harness for the processor against the real broker and registry. */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type KafkaMessage, type Message } from 'kafkajs';
import pino from 'pino';
import { DEFAULTS, loadConfig, type Config } from '../../src/config/config';
import type { ContextEvent } from '../../src/engine/events';
import { startProcessor, type Running } from '../../src/cli/run';
import { RegistryCodec } from '../../src/registry/codec';
import { registerSchemas } from '../../src/registry/register';
import { auditRecordType, spillRequestType, verdictType } from '../../src/schema/schemas';
import { serviceEnv } from './env';
import { Replay, SessionsInPlace, type AuditLineRecord } from '../../src/audit/replay';
import { engineOptions } from '../../src/engine';
import type { TrustedKeyRing } from '../../src/engine/authority';
import { generateFleetArray, type FleetOptions } from '../../src/sim';

export const { brokers, registryUrl } = serviceEnv();
// CG_TEST_KAFKA_LOG=nothing quiets the expected connection errors of fault tests.
export const kafka = new Kafka({
  clientId: 'cg-it',
  brokers,
  logLevel: process.env.CG_TEST_KAFKA_LOG === 'nothing' ? logLevel.NOTHING : logLevel.ERROR,
});

/**
 * A simulated fleet stamped from the wall clock, as live traffic is. The processor frees
 * sessions idle longer than CG_IDLE_MS by wall clock and they come back blind (decisions 123,
 * 124), so a fleet on the model's clock (2026-01-01) would decide differently from `audit`.
 */
export function liveFleet(options: FleetOptions): ReturnType<typeof generateFleetArray> {
  return generateFleetArray({ startTime: Date.now(), ...options });
}

/**
 * The transport the integration tests run the processor on: CG_KAFKA_CLIENT as the processor
 * reads it (`npm run test:platformatic` runs the integration project on @platformatic/kafka).
 */
export function testKafkaClient(): Config['kafkaClient'] {
  return loadConfig({ CG_KAFKA_CLIENT: process.env.CG_KAFKA_CLIENT }).kafkaClient;
}

/** A config with topics and group unique to one test. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  const id = randomUUID().slice(0, 8);
  return {
    ...DEFAULTS,
    brokers,
    registryUrl,
    groupId: `cg-${id}`,
    inputTopic: `ctx-${id}`,
    verdictTopic: `verdicts-${id}`,
    spillTopic: `spills-${id}`,
    auditTopic: `audit-${id}`,
    dlqTopic: `ctx-${id}.dlq`,
    changelogTopic: `state-${id}`,
    partitions: 3,
    logLevel: 'silent',
    sessionTimeoutMs: 6000,
    httpHost: '127.0.0.1',
    httpPort: 0,
    // Explicit: these tests send unsigned events; those that test authority give a ring.
    allowUnsigned: true,
    kafkaClient: testKafkaClient(),
    ...overrides,
  };
}

export async function start(c: Config): Promise<Running> {
  return startProcessor(c, pino({ level: process.env.CG_TEST_LOG ?? 'silent' }));
}

export function codecFor(c: Config): RegistryCodec {
  return RegistryCodec.connect(registryUrl, c);
}

export async function produceEvents(
  c: Config,
  events: readonly ContextEvent[],
  codec?: RegistryCodec,
): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    if (codec) await registerSchemas(codec, registryUrl);
    for (let i = 0; i < events.length; i += 500) {
      const messages: Message[] = events.slice(i, i + 500).map((e) => ({
        key: e.sessionId,
        value: codec ? codec.encodeEvent(e) : JSON.stringify(e),
      }));
      await producer.send({ topic: c.inputTopic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

export async function produceRaw(c: Config, messages: Message[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: c.inputTopic, acks: -1, messages });
  await producer.disconnect();
}

export interface Consumed {
  topic: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  /** Where it is in the log (`topic/partition@offset`), when the reader knows the partition. */
  at?: string;
  /** The producer id and epoch of its record batch (kafkajs' batchContext), with `at`. */
  writer?: string;
}

/** A consumed message as the tests compare it: key as text, headers as strings. */
export function consumed(topic: string, message: KafkaMessage, partition?: number): Consumed {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
  const r: Consumed = {
    topic,
    key: message.key?.toString() ?? null,
    value: message.value,
    headers,
  };
  if (partition !== undefined) {
    r.at = `${topic}/${partition}@${message.offset}`;
    // kafkajs keeps each message's record batch header but does not type it.
    const batch = (message as { batchContext?: { producerId?: string; producerEpoch?: number } })
      .batchContext;
    if (batch !== undefined) r.writer = `producer ${batch.producerId} epoch ${batch.producerEpoch}`;
  }
  return r;
}

/**
 * Reads topics read_committed from the beginning until `done` holds or the timeout passes,
 * through `client` (the shared plaintext one unless a test brings its own, e.g. SASL_SSL).
 */
export async function readTopics(
  topics: string[],
  done: (records: Consumed[]) => boolean,
  timeoutMs = 60_000,
  client: Kafka = kafka,
  groupPrefix = 'reader',
): Promise<Consumed[]> {
  const records: Consumed[] = [];
  await readMessages(
    topics,
    ({ topic, message }) => {
      records.push(consumed(topic, message));
      return done(records);
    },
    timeoutMs,
    client,
    groupPrefix,
  );
  return records;
}

/** `readTopics` with each message as kafkajs gives it (its partition too): `take` says when done. */
export async function readMessages(
  topics: string[],
  take: (m: { topic: string; partition: number; message: KafkaMessage }) => boolean,
  timeoutMs = 60_000,
  client: Kafka = kafka,
  groupPrefix = 'reader',
): Promise<void> {
  const consumer = client.consumer({
    groupId: `${groupPrefix}-${randomUUID()}`,
    readUncommitted: false,
  });
  await consumer.connect();
  try {
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => resolve(), timeoutMs);
      void consumer
        .run({
          eachMessage: async (m) => {
            if (take(m)) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
}

/** Avro output values back to the JSON shape of the offline audit records. */
export function decodeOutput(c: Config, r: Consumed): AuditLineRecord {
  const body = r.value!.subarray(5);
  if (r.topic === c.verdictTopic)
    return { record: 'verdict', ...(verdictType.fromBuffer(body) as object) } as AuditLineRecord;
  if (r.topic === c.spillTopic)
    return {
      record: 'spill-request',
      ...(spillRequestType.fromBuffer(body) as object),
    } as AuditLineRecord;
  if (r.topic === c.auditTopic)
    return { record: 'audit', ...(auditRecordType.fromBuffer(body) as object) } as AuditLineRecord;
  throw new Error(`not an output topic: ${r.topic}`);
}

/** Every output record (verdicts, spill requests, audit), read until `count` are there, decoded. */
export async function readOutputs(
  c: Config,
  count: number,
  timeoutMs?: number,
): Promise<{ got: Consumed[]; decoded: AuditLineRecord[] }> {
  const got = await readTopics(
    [c.verdictTopic, c.spillTopic, c.auditTopic],
    (rs) => rs.length >= count,
    timeoutMs,
  );
  return { got, decoded: got.map((r) => decodeOutput(c, r)) };
}

/**
 * The offline audit of the same events (contract §7), per session in order, with the grace
 * period the processor ran with (a soak shortens it to see closed sessions freed).
 */
export function offline(
  events: readonly ContextEvent[],
  graceMs: number = DEFAULTS.graceMs,
  trustedKeys: TrustedKeyRing | null = null,
): AuditLineRecord[] {
  const replay = new Replay(new SessionsInPlace(engineOptions({ graceMs, trustedKeys })));
  return events.flatMap((e, i) => replay.line(JSON.stringify(e), i + 1));
}

/** Verdicts keyed `sessionId/inputSeq`, with the processing-time stamp removed. */
export function verdictMap(records: AuditLineRecord[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const r of records) {
    if (r.record !== 'verdict') continue;
    const { decidedAt: _d, ...rest } = r;
    const key = `${r.sessionId}/${r.inputSeq}/${r.requestId}`;
    out.set(key, [...(out.has(key) ? [out.get(key)] : []), rest].length > 1 ? 'DUPLICATE' : rest);
  }
  return out;
}

export const countOf = (records: Consumed[], topic: string) =>
  records.filter((r) => r.topic === topic).length;
