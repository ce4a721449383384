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
import { createHttpServer, ensurePortFree, listen } from '../http/server';
import { StartupError } from '../errors';
import { combineObservers } from '../kafka/observers';
import type { ProcessorObserver } from '../kafka/processorObserver';
import { type Announcement, announceWhenReady } from './ready';

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
  log = createLogger(config.logLevel, undefined, config.logFormat),
  options: StartOptions = {},
): Promise<Running> {
  log.info({ config: redactConfig(config) }, 'configuration');
  // Before the slow parts: a second instance on the same port fails now, not after 60 s of JVMs.
  await ensurePortFree(config.httpHost, config.httpPort);
  let services: Services | null = null;
  if (config.brokers.length === 0) {
    log.info('no KAFKA_BROKERS set: starting an embedded local Kafka and schema registry');
    services = await provideServices().catch((e: unknown) => {
      throw new StartupError(
        'EMBEDDED_SERVICES_FAILED',
        `the embedded local Kafka and schema registry did not start: ${(e as Error).message} ` +
          '- see README "Quick start" for what they need, or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL',
        { cause: e },
      );
    });
    config = { ...config, brokers: services.brokers, registryUrl: services.registryUrl };
    log.info(
      { brokers: services.brokers, registryUrl: services.registryUrl, mode: services.mode },
      'local services ready',
    );
  }
  const kafka = kafkaClient(config.brokers, config.clientId, log, config);
  try {
    // No broker, wrong credentials or an untrusted certificate: a clear error now, not retries.
    await checkKafkaSecurity(config.brokers, config.clientId, log, config);
  } catch (e) {
    await services?.stop();
    throw e;
  }
  const codec = RegistryCodec.fromConfig(config);
  const registry = new Registry();
  const recent = new RecentVerdicts();
  let processor: Processor | null = null;
  const metrics = new Metrics(
    registry,
    () => processor?.sessionCount() ?? 0,
    () => processor?.refusedFilterFill() ?? 0,
  );
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
      sessions: processor,
      recent,
      readinessProblems: () => (codec.unavailable === null ? [] : [codec.unavailable]),
    },
  );
  const httpPort = await listen(server, config.httpHost, config.httpPort).catch(
    async (e: unknown) => {
      await services?.stop();
      throw e;
    },
  );
  log.info({ host: config.httpHost, port: httpPort }, 'http server listening');
  try {
    await processor.start();
  } catch (e) {
    // Leave nothing behind: the consumer, the HTTP port and the embedded JVMs.
    await processor.stop().catch(() => undefined);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    codec.close();
    await services?.stop();
    throw e;
  }
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

/** Signals closer together than this are one keystroke delivered twice (see runCommand). */
const SAME_KEYSTROKE_MS = 1_000;

/** A stop that takes longer than this (a broker gone away first) ends the process anyway. */
export const STOP_DEADLINE_MS = 25_000;

export async function runCommand(flags: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(process.env, flags);
  requireRegistry(config);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  // Handlers from the first moment: a signal during start-up must stop as cleanly as later.
  let running: Running | null = null;
  let announcement: Announcement | null = null;
  let stopRequested: NodeJS.Signals | null = null;
  let stopRequestedAt = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopRequested !== null) {
      // One Ctrl-C under `npm start` arrives twice: the terminal signals the whole foreground
      // process group, and npm forwards its own copy. Only a later one means "now".
      if (Date.now() - stopRequestedAt < SAME_KEYSTROKE_MS) {
        log.debug({ signal }, 'the same signal again (forwarded by npm): still stopping');
        return;
      }
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    }
    stopRequested = signal;
    stopRequestedAt = Date.now();
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.warn({ deadlineMs: STOP_DEADLINE_MS }, 'stop did not finish in time: exiting');
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    // During start-up there is nothing to stop gracefully yet: the exit hooks of
    // src/services/processes.ts end the embedded JVMs.
    if (running === null) process.exit(0);
    announcement?.stop();
    void running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  running = await startProcessor(config, log);
  announcement = announceWhenReady(running, config.brokers.length === 0);
}
