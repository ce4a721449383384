/** A kafkajs client whose logs go through pino (one JSON log stream), with optional TLS and SASL. */
import { readFileSync } from 'node:fs';
import {
  classify,
  Kafka,
  kafkajsEntryLevel,
  kafkajsLogLevel,
  type LogEntry,
  type SASLOptions,
} from './kafkajs';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { causeMessages, OperationalError, StartupError } from '../errors';
import { retry } from '../retry';

/** The security-related part of the Config (see config.ts). */
export type KafkaSecurity = Pick<
  Config,
  | 'kafkaSaslMechanism'
  | 'kafkaSaslUsername'
  | 'kafkaSaslPassword'
  | 'kafkaSsl'
  | 'kafkaSslCa'
  | 'kafkaSslRejectUnauthorized'
>;

/**
 * A TCP connect that does not complete in this time is a connection error (kafkajs' default
 * is 1 s, too short for a TLS handshake to a busy broker; longer only delays a clear error).
 */
export const CONNECTION_TIMEOUT_MS = 5_000;
/** A broker that does not answer the SASL exchange in this time fails the connection. */
export const AUTHENTICATION_TIMEOUT_MS = 5_000;

export function kafkaSsl(s: KafkaSecurity): boolean | ConnectionOptions | undefined {
  if (!s.kafkaSsl) return undefined;
  if (s.kafkaSslCa === null && s.kafkaSslRejectUnauthorized) return true;
  return {
    rejectUnauthorized: s.kafkaSslRejectUnauthorized,
    ...(s.kafkaSslCa !== null ? { ca: [readFileSync(s.kafkaSslCa, 'utf8')] } : {}),
  };
}

export function kafkaSasl(s: KafkaSecurity): SASLOptions | undefined {
  if (s.kafkaSaslMechanism === 'none') return undefined;
  const username = s.kafkaSaslUsername ?? '';
  const password = s.kafkaSaslPassword ?? '';
  switch (s.kafkaSaslMechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}

export function kafkaClient(
  brokers: string[],
  clientId: string,
  log: Logger,
  security?: KafkaSecurity,
  retries = 8,
): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  const ssl = security ? kafkaSsl(security) : undefined;
  const sasl = security ? kafkaSasl(security) : undefined;
  return new Kafka({
    clientId,
    brokers,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(sasl !== undefined ? { sasl } : {}),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    authenticationTimeout: AUTHENTICATION_TIMEOUT_MS,
    // pino filters again, but kafkajs skips building entries below its own threshold.
    logLevel: kafkajsLogLevel(log.level),
    retry: { retries, initialRetryTime: 200 },
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[kafkajsEntryLevel(level, entry)](rest, message);
      },
  });
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
    const failure = classify(e);
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
