/** `compaction-guard simulate`: a deterministic fleet of orchestrators producing to the input topic. */
import { type Kafka, type Message, Partitioners } from 'kafkajs';
import { ConfigError, loadConfig } from '../config/config';
import type { ContextEvent } from '../engine/events';
import { noEmbeddedMessage, readEmbeddedState } from '../services/embedded';
import { createLogger } from '../config/redact';
import { checkedSend } from '../kafka/checkedSend';
import { kafkaClient } from '../kafka/client';
import { partitionCount } from '../kafka/topics';
import { RegistryCodec } from '../registry/codec';
import { DEFAULT_START_TIME, generateFleet } from '../sim';

export interface SimulateOptions {
  sessions: number;
  events: number;
  seed: number;
  rate: number;
  faultyShare: number;
  spillAck: boolean;
  format: 'avro' | 'json';
  /** Session ids are `<prefix>-<n>`. */
  sessionPrefix: string;
  /**
   * Stamp events with the model's clock (DEFAULT_START_TIME, 1 ms per event) instead of the
   * wall clock at send time: the same seed and prefix then give the same events byte for byte.
   */
  replay: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The model's clock moves 1 ms per event whatever the rate, so its stamps drift from the time
 * the processor decides (at 2,000 events/s they lie in the future; at 500/s they fall behind
 * by seconds): verdict latency and grace periods would be fiction. A demo stamps real time.
 */
export function stampNow(e: ContextEvent, now = Date.now()): ContextEvent {
  return { ...e, occurredAt: now };
}

/**
 * The input topic's partitions. The simulator never creates topics (the processor does, at
 * start): a missing one is a one-line configuration error, not a wait.
 */
async function inputPartitions(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(topic))
      throw new ConfigError(
        `the input topic ${topic} does not exist: start the processor first (it creates the topics), or name another with CG_INPUT_TOPIC (--input-topic)`,
      );
    return await partitionCount(admin, topic);
  } finally {
    await admin.disconnect();
  }
}

export async function simulate(
  flags: Record<string, string | undefined>,
  o: SimulateOptions,
): Promise<number> {
  let config = loadConfig(process.env, flags);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  if (config.brokers.length === 0) {
    // No brokers given: those of a running `npm start` (src/services/embedded.ts).
    const embedded = readEmbeddedState();
    if (embedded === null) throw new ConfigError(noEmbeddedMessage('simulate'));
    config = {
      ...config,
      brokers: embedded.brokers,
      registryUrl: config.registryUrl ?? embedded.registryUrl,
    };
  }
  const kafka = kafkaClient(config.brokers, `${config.clientId}-simulator`, log, config);
  if (o.format === 'avro' && config.registryUrl === null)
    throw new ConfigError('simulate --format avro needs SCHEMA_REGISTRY_URL (--registry-url)');
  const codec = o.format === 'avro' ? RegistryCodec.fromConfig(config) : null;
  await codec?.registerAll();
  // Every event is pinned to its partition and each send checked (src/kafka/checkedSend.ts):
  // kafkajs' retry after a leader move can leave a partition unsent and still resolve
  // (kafkajs#1303), a lost event the processor would see as a seq gap.
  const partitionCounts = new Map([
    [config.inputTopic, await inputPartitions(kafka, config.inputTopic)],
  ]);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // The partitioner kafkajs uses anyway (Java-compatible murmur2), named so that kafkajs does
    // not warn about its v2 change; and an idempotent producer's unlimited retries (kafkajs
    // warns that fewer may invalidate exactly-once delivery).
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: Number.MAX_SAFE_INTEGER },
  });
  await producer.connect();
  const fleet = generateFleet({
    sessions: o.sessions,
    events: o.events,
    seed: o.seed,
    faultyShare: o.faultyShare,
    spillAck: o.spillAck,
    sessionPrefix: o.sessionPrefix,
    startTime: DEFAULT_START_TIME,
  });
  const chunk = Math.max(1, Math.min(500, Math.ceil(o.rate / 10)));
  const started = Date.now();
  let sent = 0;
  let stopped = false;
  process.once('SIGINT', () => (stopped = true));
  process.once('SIGTERM', () => (stopped = true));
  try {
    while (!stopped) {
      const messages: Message[] = [];
      while (messages.length < chunk) {
        const r = fleet.next();
        if (r.done) break;
        const event = o.replay ? r.value : stampNow(r.value);
        messages.push({
          key: event.sessionId,
          value: codec ? codec.encodeEvent(event) : JSON.stringify(event),
        });
      }
      if (messages.length === 0) break;
      await checkedSend(producer, [{ topic: config.inputTopic, messages }], {
        partitionCounts,
        log,
      });
      sent += messages.length;
      // Pace to the target rate: never ahead of rate × elapsed.
      const ahead = (sent / o.rate) * 1000 - (Date.now() - started);
      if (ahead > 0) await sleep(ahead);
    }
  } finally {
    await producer.disconnect();
  }
  log.info(
    {
      sent,
      seconds: (Date.now() - started) / 1000,
      topic: config.inputTopic,
      sessionPrefix: o.sessionPrefix,
    },
    'simulation done',
  );
  return sent;
}
