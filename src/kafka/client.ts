/**
 * The Kafka client of the client library and the commands (a `Connector`,
 * src/kafka/transport/connection.ts: kafkajs), and the first connection's check of the
 * brokers, credentials and certificates. The processor's own transport is chosen by
 * CG_KAFKA_CLIENT (src/cli/run.ts).
 */
import type { Logger } from 'pino';
import { kafkajsConnector } from './kafkajs';
import type { KafkaFailureCode } from './transport';
import type {
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

/** The client of the client library and the commands. */
const connector = kafkajsConnector;

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

/** A connection of the client library's and the commands' Kafka client (connectionOptions). */
export function kafkaClient(...args: Parameters<typeof connectionOptions>): KafkaConnection {
  return connector.connect(connectionOptions(...args));
}

/** The project's code of a failure of the commands' Kafka client, or null when it is none. */
export function kafkaFailureCode(e: unknown): KafkaFailureCode | null {
  return connector.classify(e);
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
  const admin = kafkaClient(brokers, `${clientId}-preflight`, log, s, 0).admin();
  try {
    await admin.connect();
  } catch (e) {
    const chain = causeMessages(e);
    const failure = kafkaFailureCode(e);
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
