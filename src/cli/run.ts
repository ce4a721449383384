/** `compaction-guard run`: the stream processor, with embedded local services when no brokers are set. */
import {
  type Config,
  ConfigError,
  loadConfig,
  requireRegistry,
  requireSafeHttp,
} from '../config/config';
import { createLogger, logConfiguration } from '../config/redact';
import { checkKafkaSecurity, connectionOptions } from '../kafka/client';
import { kafkajsTransport } from '../kafka/kafkajs';
import { Processor } from '../kafka/processor';
import type { Transport } from '../kafka/transport';
import type { KafkaConnectionOptions } from '../kafka/transport/connection';
import { requirePlatformaticNode } from '../kafka/platformatic/connection';
import { RegistryCodec } from '../registry/codec';
import { provideServices, type Services } from '../services';
import { Registry } from 'prom-client';
import type { Server } from 'node:http';
import { Metrics } from '../metrics/metrics';
import { RecentVerdicts } from '../http/recentVerdicts';
import { createHttpServer, ensurePortFree, listen } from '../http/server';
import { StartupError } from '../errors';
import { combineObservers } from '../kafka/observers';
import { UnauthorizedEventWarning } from '../kafka/unauthorizedWarning';
import type { ProcessorObserver } from '../kafka/processorObserver';
import { type Announcement, announceWhenReady } from './ready';
import { KeyRingInForce, requireAuthority } from '../authority/keyRingInForce';
import { type DevelopmentKeys, createDevelopmentKeys } from '../authority/developmentKeys';
import { embeddedStatePath } from '../services/embedded';
import path from 'node:path';

export interface Running {
  processor: Processor;
  config: Config;
  metrics: Metrics;
  /** The HTTP server's port (useful with CG_HTTP_PORT=0). */
  httpPort: number;
  /** The trusted key ring in force (contract §4b); `reload()` re-reads CG_TRUSTED_KEYS_FILE. */
  keyRing: KeyRingInForce;
  /** The development key and ring `npm start` made (embedded services, no ring given), or null. */
  developmentKeys: DevelopmentKeys | null;
  stop(): Promise<void>;
}

/** Where `npm start` keeps its development key and ring: next to its state file, in `dev-keys/`. */
export function developmentKeysDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(embeddedStatePath(env)), 'dev-keys');
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
  requireSafeHttp(config);
  // Before anything starts: the client chosen must run on this Node.
  if (config.kafkaClient === 'platformatic') requirePlatformaticNode();
  logConfiguration(log, config);
  const embedded = config.brokers.length === 0;
  // Secure by default (contract §4b): a cluster without a ring is refused before anything starts.
  if (!embedded) requireAuthority(config);
  // Before the slow parts: a second instance on the same port fails now, not after 60 s of JVMs.
  await ensurePortFree(config.httpHost, config.httpPort);
  // After the port check: a second `npm start` must not replace the running one's key.
  let developmentKeys: DevelopmentKeys | null = null;
  if (embedded && config.trustedKeysFile === null && !config.allowUnsigned) {
    developmentKeys = createDevelopmentKeys(developmentKeysDir());
    config = { ...config, trustedKeysFile: developmentKeys.trustedKeysFile };
    log.info(
      { signingKeyFile: developmentKeys.signingKeyFile, keyId: developmentKeys.keyId },
      'embedded mode: a development key (roles ACKNOWLEDGE, SPILL) and a ring of it alone',
    );
  }
  const keyRing = KeyRingInForce.load(config, log);
  let services: Services | null = null;
  if (embedded) {
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
  const connection = connectionOptions(config.brokers, config.clientId, log, config);
  let transport: Transport;
  try {
    // No broker, wrong credentials or an untrusted certificate: a clear error now, not retries.
    await checkKafkaSecurity(config.brokers, config.clientId, log, config);
    transport = await transportFor(config, connection);
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
  keyRing.observe(metrics);
  processor = new Processor({
    transport,
    codec,
    config,
    log,
    trustedKeys: () => keyRing.current,
    observer: combineObservers(
      metrics,
      recent,
      new UnauthorizedEventWarning(log),
      ...(options.observer ? [options.observer] : []),
    ),
  });
  // The HTTP server comes up first: /healthz answers and /readyz says "not yet" during start-up.
  const server: Server = createHttpServer(
    {
      host: config.httpHost,
      port: config.httpPort,
      sessionsEnabled: config.httpSessions,
      sessionsToken: config.httpSessionsToken,
      requestTimeoutMs: config.httpRequestTimeoutMs,
      maxConnections: config.httpMaxConnections,
      maxRequestBytes: config.httpMaxRequestBytes,
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
    // The start-up failure is what is reported; a failing stop is worth a line, not the exit.
    await processor
      .stop()
      .catch((err: unknown) => log.warn({ err }, 'stopping after the failed start did not finish'));
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
  return { processor: running, config, metrics, httpPort, keyRing, developmentKeys, stop };
}

/**
 * The processor's transport, by CG_KAFKA_CLIENT. @platformatic/kafka is loaded only when chosen:
 * it is ESM-only (the CommonJS build requires it, which Node ≥ 22.12 can) and needs Node ≥ 22.22
 * (checked at the start of startProcessor), so the default never loads it.
 */
export async function transportFor(
  config: Config,
  connection: KafkaConnectionOptions,
): Promise<Transport> {
  switch (config.kafkaClient) {
    case 'kafkajs':
      return kafkajsTransport(connection, { coordinatorCache: config.coordinatorCache });
    case 'platformatic': {
      const { platformaticTransport } = await import('../kafka/platformatic/transport');
      const { platformaticClients } = await import('../kafka/platformatic/clients');
      return platformaticTransport(config, platformaticClients());
    }
    default:
      // A Config built by hand (an embedding program, a benchmark) rather than loadConfig.
      throw new ConfigError(
        `kafkaClient ${JSON.stringify(config.kafkaClient)}: expected kafkajs or platformatic`,
      );
  }
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
  // SIGHUP re-reads a ring the operator gave (rotate, revoke without a restart). Without one
  // (CG_ALLOW_UNSIGNED, or npm start's development ring) it keeps its default: the end of the
  // terminal ends the process, as before.
  let reloadPending = false;
  if (config.trustedKeysFile !== null)
    process.on('SIGHUP', () => {
      log.info({ signal: 'SIGHUP' }, 're-reading the trusted key ring');
      if (running === null) reloadPending = true;
      else running.keyRing.reload();
    });
  running = await startProcessor(config, log);
  if (reloadPending) running.keyRing.reload();
  announcement = announceWhenReady(running, config.brokers.length === 0);
}
