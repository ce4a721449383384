/** `compaction-guard run`: the stream processor, with embedded local services when no brokers are set. */
import { type Config, loadConfig, requireRegistry } from '../config/config';
import { createLogger, redactConfig } from '../config/redact';
import { checkKafkaSecurity, kafkaClient } from '../kafka/client';
import { Processor } from '../kafka/processor';
import { RegistryCodec } from '../registry/codec';
import { provideServices, type Services } from '../services';
import { Registry } from 'prom-client';
import type { Server } from 'node:http';
import { Metrics } from '../metrics/metrics';
import { RecentVerdicts } from '../http/recentVerdicts';
import { createHttpServer, listen } from '../http/server';
import { combineObservers } from '../kafka/observers';
import type { ProcessorObserver } from '../kafka/partition';
import { announceWhenReady } from './ready';

export interface Running {
  processor: Processor;
  config: Config;
  metrics: Metrics;
  /** The HTTP server's port (useful with CG_HTTP_PORT=0). */
  httpPort: number;
  stop(): Promise<void>;
}

/** What an embedding program adds to the processor. */
export interface StartOptions {
  /** Told what the processor does, besides the metrics and the /sessions verdict cache. */
  observer?: ProcessorObserver;
}

/** Starts the processor; with no KAFKA_BROKERS, first starts a local Kafka + registry. */
export async function startProcessor(
  config: Config,
  log = createLogger(config.logLevel),
  options: StartOptions = {},
): Promise<Running> {
  log.info({ config: redactConfig(config) }, 'configuration');
  let services: Services | null = null;
  if (config.brokers.length === 0) {
    log.info('no KAFKA_BROKERS set: starting an embedded local Kafka and schema registry');
    services = await provideServices();
    config = { ...config, brokers: services.brokers, registryUrl: services.registryUrl };
    log.info(
      { brokers: services.brokers, registryUrl: services.registryUrl, mode: services.mode },
      'local services ready',
    );
  }
  const kafka = kafkaClient(config.brokers, config.clientId, log, config);
  try {
    // Wrong credentials or an untrusted broker certificate: a clear error now, not retries.
    await checkKafkaSecurity(config.brokers, config.clientId, log, config);
  } catch (e) {
    await services?.stop();
    throw e;
  }
  const codec = RegistryCodec.fromConfig(config);
  const registry = new Registry();
  const recent = new RecentVerdicts();
  let processor: Processor | null = null;
  const metrics = new Metrics(registry, () => processor?.sessionCount() ?? 0);
  processor = new Processor({
    kafka,
    codec,
    config,
    log,
    observer: combineObservers(metrics, recent, ...(options.observer ? [options.observer] : [])),
  });
  // The HTTP server comes up first: /healthz answers and /readyz says "not yet" during start-up.
  const server: Server = createHttpServer(
    {
      host: config.httpHost,
      port: config.httpPort,
      sessionsEnabled: config.httpSessions,
      sessionsToken: config.httpSessionsToken,
    },
    {
      registry,
      processor,
      recent,
      readinessProblems: () => (codec.unavailable === null ? [] : [codec.unavailable]),
    },
  );
  const httpPort = await listen(server, config.httpHost, config.httpPort);
  log.info({ host: config.httpHost, port: httpPort }, 'http server listening');
  await processor.start();
  log.info({ group: config.groupId, input: config.inputTopic }, 'processor started');
  let stopping: Promise<void> | null = null;
  const running = processor;
  const stop = () =>
    (stopping ??= (async () => {
      await running.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      codec.close();
      await services?.stop();
    })());
  return { processor: running, config, metrics, httpPort, stop };
}

export async function runCommand(flags: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(process.env, flags);
  requireRegistry(config);
  const log = createLogger(config.logLevel);
  const running = await startProcessor(config, log);
  const announcement = announceWhenReady(running, config.brokers.length === 0);
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    announcement.stop();
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
