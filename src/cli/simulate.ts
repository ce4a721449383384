/** `compaction-guard simulate`: a deterministic fleet of orchestrators producing to the input topic. */
import { ConfigError } from '../config/config';
import type { ContextEvent } from '../engine/events';
import { isSignable } from '../engine/authority';
import { type SigningKey, expiryFrom, signed } from '../authority/signing';
import { configuredSigningKey } from '../authority/signingKeySource';
import { connectionOf } from '../client/connection';
import { createLogger } from '../config/redact';
import { checkKafkaSecurity, kafkaClient } from '../kafka/client';
import type { OutRecord } from '../kafka/transport';
import type { KafkaConnection } from '../kafka/transport/connection';
import type { Logger } from 'pino';
import { partitionCount } from '../kafka/topics';
import { RegistryCodec } from '../registry/codec';
import { registerSchemas } from '../registry/register';
import { DEFAULT_START_TIME, generateFleet } from '../sim';
import { sleep } from '../time';

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

/**
 * A simulated orchestrator's spill answers signed as a real one's are (contract §4b): valid for
 * the default validity from the event's own time, the latest its session has seen.
 */
export function signedBy(key: SigningKey | null, e: ContextEvent): ContextEvent {
  return key !== null && isSignable(e) ? signed(e, key, expiryFrom(e.occurredAt)) : e;
}

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
async function inputPartitions(kafka: KafkaConnection, topic: string): Promise<number> {
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
  // No brokers given: those of a running `npm start`. A registry is needed for Avro only.
  const { config, embedded } = connectionOf(process.env, {
    command: 'simulate',
    flags,
    registry: 'optional',
  });
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  const signWith = configuredSigningKey(process.env, flags, embedded)?.key ?? null;
  if (signWith === null)
    log.warn(
      'no signing key (--key, CG_SIGNING_KEY_FILE): the simulated SpillCompleted and SpillFailed go unsigned, ' +
        'and a processor with a trusted key ring answers them UNAUTHORIZED_EVENT',
    );
  if (o.format === 'avro' && config.registryUrl === null)
    throw new ConfigError('simulate --format avro needs SCHEMA_REGISTRY_URL (--registry-url)');
  const clientId = `${config.clientId}-simulator`;
  // As `run`: no broker, wrong credentials or an untrusted certificate are one line within
  // seconds (KAFKA_UNREACHABLE, exit 3), not a minute of kafkajs retries and a stack.
  await checkKafkaSecurity(config.brokers, clientId, log, config);
  const kafka = await kafkaClient(config.brokers, clientId, log, config);
  const codec = o.format === 'avro' ? RegistryCodec.fromConfig(config) : null;
  try {
    if (codec !== null) await registerSchemas(codec, config.registryUrl);
    return await produceFleet(kafka, codec, config.inputTopic, signWith, o, log);
  } finally {
    codec?.close();
  }
}

/** The fleet's events to `topic`, paced to `o.rate`, until done or SIGINT/SIGTERM: how many. */
async function produceFleet(
  kafka: KafkaConnection,
  codec: RegistryCodec | null,
  topic: string,
  signWith: SigningKey | null,
  o: SimulateOptions,
  log: Logger,
): Promise<number> {
  // Every event is pinned to its partition and each send checked (PlainProducer.send): kafkajs'
  // retry after a leader move can leave a partition unsent and still resolve (kafkajs#1303), a
  // lost event the processor would see as a seq gap.
  const partitionCounts = new Map([[topic, await inputPartitions(kafka, topic)]]);
  const producer = kafka.idempotentProducer(log);
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
      const messages: OutRecord[] = [];
      while (messages.length < chunk) {
        const r = fleet.next();
        if (r.done) break;
        const event = signedBy(signWith, o.replay ? r.value : stampNow(r.value));
        messages.push({
          key: event.sessionId,
          value: codec ? codec.encodeEvent(event) : JSON.stringify(event),
        });
      }
      if (messages.length === 0) break;
      await producer.send([{ topic, messages }], partitionCounts);
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
      topic,
      sessionPrefix: o.sessionPrefix,
    },
    'simulation done',
  );
  return sent;
}
