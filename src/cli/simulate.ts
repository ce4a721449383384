/** `compaction-guard simulate`: a deterministic fleet of orchestrators producing to the input topic. */
import type { Message } from 'kafkajs';
import { ConfigError, loadConfig } from '../config/config';
import { noEmbeddedMessage, readEmbeddedState } from '../services/embedded';
import { createLogger } from '../config/redact';
import { kafkaClient } from '../kafka/client';
import { RegistryCodec } from '../registry/codec';
import { generateFleet } from '../sim';

export interface SimulateOptions {
  sessions: number;
  events: number;
  seed: number;
  rate: number;
  faultyShare: number;
  spillAck: boolean;
  format: 'avro' | 'json';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function simulate(
  flags: Record<string, string | undefined>,
  o: SimulateOptions,
): Promise<number> {
  let config = loadConfig(process.env, flags);
  const log = createLogger(config.logLevel);
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
    throw new Error('simulate --format avro needs SCHEMA_REGISTRY_URL (--registry-url)');
  const codec = o.format === 'avro' ? RegistryCodec.fromConfig(config) : null;
  await codec?.registerAll();
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const fleet = generateFleet({
    sessions: o.sessions,
    events: o.events,
    seed: o.seed,
    faultyShare: o.faultyShare,
    spillAck: o.spillAck,
    startTime: Date.now(),
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
        messages.push({
          key: r.value.sessionId,
          value: codec ? codec.encodeEvent(r.value) : JSON.stringify(r.value),
        });
      }
      if (messages.length === 0) break;
      await producer.send({ topic: config.inputTopic, acks: -1, messages });
      sent += messages.length;
      // Pace to the target rate: never ahead of rate × elapsed.
      const ahead = (sent / o.rate) * 1000 - (Date.now() - started);
      if (ahead > 0) await sleep(ahead);
    }
  } finally {
    await producer.disconnect();
  }
  log.info(
    { sent, seconds: (Date.now() - started) / 1000, topic: config.inputTopic },
    'simulation done',
  );
  return sent;
}
