/**
 * The Kafka client of the client library and the commands (a `Connector`,
 * src/kafka/transport/connection.ts), chosen by CG_KAFKA_CLIENT as the processor's transport is
 * (src/cli/run.ts), and the first connection's check of the brokers, credentials and
 * certificates, which stays on kafkajs (docs/decisions.md 240).
 */
import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config/config';
import { kafkajsConnector } from './kafkajs';
import type { KafkaFailureCode } from './transport';
import type {
  Connector,
  KafkaConnection,
  KafkaConnectionOptions,
  KafkaSecurity,
} from './transport/connection';
import { causeMessages, OperationalError, StartupError } from '../errors';
import { retry } from '../retry';

export {
  AUTHENTICATION_TIMEOUT_MS,
  CONNECTION_TIMEOUT_MS,
  type KafkaSecurity,
} from './transport/connection';

/** How a client connects, and which client (CG_KAFKA_CLIENT; omitted: kafkajs). */
export type KafkaSettings = KafkaSecurity & Partial<Pick<Config, 'kafkaClient'>>;

/** The @platformatic/kafka connector once loaded (only when chosen: ESM-only, Node ≥ 22.22). */
let platformatic: Connector | null = null;

/** The connector of `client`, loading @platformatic/kafka the first time it is chosen. */
export async function connectorFor(client: Config['kafkaClient'] = 'kafkajs'): Promise<Connector> {
  switch (client) {
    case 'kafkajs':
      return kafkajsConnector;
    case 'platformatic': {
      // Types only of the library in connection.ts: its Node check runs before the library loads.
      (await import('./platformatic/connection')).requirePlatformaticNode();
      platformatic ??= (await import('./platformatic/connector')).platformaticConnector;
      return platformatic;
    }
    default:
      // A Config built by hand (an embedding program) rather than loadConfig.
      throw new ConfigError(
        `kafkaClient ${JSON.stringify(client)}: expected kafkajs or platformatic`,
      );
  }
}

/** How a client connects to `brokers` as `clientId`; its own logs go to a child of `log`. */
export function connectionOptions(
  brokers: string[],
  clientId: string,
  log: Logger,
  security?: KafkaSecurity,
  retries = 8,
): KafkaConnectionOptions {
  return { brokers, clientId, log, ...(security !== undefined ? { security } : {}), retries };
}

/**
 * A connection of the client library's and the commands' Kafka client, the one `settings`
 * chooses (`kafkaClient`), as `connectionOptions` says.
 */
export async function kafkaClient(
  brokers: string[],
  clientId: string,
  log: Logger,
  settings?: KafkaSettings,
  retries?: number,
): Promise<KafkaConnection> {
  const connector = await connectorFor(settings?.kafkaClient);
  return connector.connect(connectionOptions(brokers, clientId, log, settings, retries));
}

/**
 * The project's code of a failure of the commands' Kafka client, or null when it is none: as
 * kafkajs classifies it, else as @platformatic/kafka does when it was loaded (each knows only
 * its own errors).
 */
export function kafkaFailureCode(e: unknown): KafkaFailureCode | null {
  return kafkajsConnector.classify(e) ?? platformatic?.classify(e) ?? null;
}

/** A start-up failure that retries cannot fix (see STARTUP_FAILURES). */
export class KafkaSecurityError extends StartupError {
  declare readonly code: 'KAFKA_AUTHENTICATION_FAILED' | 'KAFKA_TLS_FAILED';

  constructor(
    message: string,
    code: 'KAFKA_AUTHENTICATION_FAILED' | 'KAFKA_TLS_FAILED',
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'KafkaSecurityError';
  }
}

/**
 * How long start-up keeps trying to reach a broker before it gives up with KAFKA_UNREACHABLE.
 * Long enough for a broker that is still binding its port; short enough that a wrong
 * KAFKA_BROKERS is reported in seconds, not after a minute of kafkajs retries.
 */
export const PREFLIGHT_DEADLINE_MS = 8_000;
const PREFLIGHT_PAUSE_MS = 1_000;

/**
 * The first connection, so that start-up fails in seconds with a message that names the
 * setting to check: wrong credentials (kafkajs already treats them as non-retriable), a broker
 * certificate the CA does not verify (kafkajs would retry that like any connection error), and
 * no broker answering at all (kafkajs would retry for about a minute, then throw a stack).
 */
export async function checkKafkaSecurity(
  brokers: string[],
  clientId: string,
  log: Logger,
  s: KafkaSecurity,
  deadlineMs = PREFLIGHT_DEADLINE_MS,
): Promise<void> {
  // Each attempt's connection errors are kafkajs ERROR lines; the outcome is reported once.
  const quiet = log.child(
    { phase: 'preflight' },
    { level: log.isLevelEnabled('debug') ? log.level : 'silent' },
  );
  await retry(() => connectOnce(brokers, clientId, quiet, s), {
    deadlineMs,
    backoff: { initialMs: PREFLIGHT_PAUSE_MS, growth: 'constant' },
    onRetry: (e, attempt) =>
      log.debug({ err: (e as Error).cause ?? e, attempt }, 'no broker answered yet; retrying'),
    giveUp: (e, attempts, retriable) => {
      if (!retriable) return e;
      const failure = (e as Error).cause as Error;
      return new StartupError(
        'KAFKA_UNREACHABLE',
        `no Kafka broker answered at ${brokers.join(',')} in ${Math.round(deadlineMs / 1000)} s ` +
          `(${attempts} attempts; last: ${causeMessages(failure)}) - check KAFKA_BROKERS (--brokers) and that the brokers are up`,
        { cause: failure },
      );
    },
  });
}

/**
 * One connection attempt to each broker in turn until one answers: a KafkaSecurityError when
 * retrying cannot help, else a retriable KAFKA_UNREACHABLE whose cause is the last broker's
 * error. Each broker is tried on its own because a kafkajs client without retries only ever
 * tries the first of its list: with that broker down, start-up failed although the other two
 * of a 3-node cluster were up (seen in the cluster suite).
 */
async function connectOnce(
  brokers: string[],
  clientId: string,
  log: Logger,
  s: KafkaSecurity,
): Promise<void> {
  let last: unknown;
  for (const broker of brokers) {
    try {
      await connectTo(broker, clientId, log, s);
      return;
    } catch (e) {
      if (e instanceof KafkaSecurityError) throw e;
      last = e;
    }
  }
  throw last;
}

async function connectTo(
  broker: string,
  clientId: string,
  log: Logger,
  s: KafkaSecurity,
): Promise<void> {
  const brokers = [broker];
  // On kafkajs whatever CG_KAFKA_CLIENT says: @platformatic/kafka's admin connects on its first
  // request, so its connect() would check nothing (docs/decisions.md 240).
  const preflight = connectionOptions(brokers, `${clientId}-preflight`, log, s, 0);
  const admin = kafkajsConnector.connect(preflight).admin();
  try {
    await admin.connect();
  } catch (e) {
    const chain = causeMessages(e);
    const failure = kafkajsConnector.classify(e);
    if (failure === 'KAFKA_AUTHENTICATION_FAILED') {
      throw new KafkaSecurityError(
        `Kafka authentication failed (SASL ${s.kafkaSaslMechanism.toUpperCase()} as ${JSON.stringify(s.kafkaSaslUsername ?? '')} at ${brokers.join(',')}): ${chain} ` +
          '- check CG_KAFKA_SASL_MECHANISM, CG_KAFKA_SASL_USERNAME and CG_KAFKA_SASL_PASSWORD',
        'KAFKA_AUTHENTICATION_FAILED',
        { cause: e },
      );
    }
    if (s.kafkaSsl && failure === 'KAFKA_TLS_FAILED') {
      throw new KafkaSecurityError(
        `Kafka TLS handshake failed (${brokers.join(',')}): ${chain} - check CG_KAFKA_SSL_CA` +
          (s.kafkaSslCa !== null ? ` (${s.kafkaSslCa})` : ' (unset: the system CAs are used)') +
          ' and that the broker certificate names the host you connect to',
        'KAFKA_TLS_FAILED',
        { cause: e },
      );
    }
    throw new OperationalError('KAFKA_UNREACHABLE', chain, { cause: e });
  } finally {
    // The preflight's answer is already decided; an admin that fails to disconnect holds no
    // state worth reporting.
    await admin.disconnect().catch(() => undefined);
  }
}
