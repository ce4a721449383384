/** A kafkajs client whose logs go through pino (one JSON log stream), with optional TLS and SASL. */
import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type LogEntry, type SASLOptions } from 'kafkajs';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/config';

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

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
    logLevel: logLevel.WARN,
    retry: { retries, initialRetryTime: 200 },
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[LEVELS[level] ?? 'info'](rest, message);
      },
  });
}

export class KafkaSecurityError extends Error {
  constructor(
    message: string,
    readonly code: 'KAFKA_AUTHENTICATION_FAILED' | 'KAFKA_TLS_FAILED',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Node's TLS verification failures, as they appear in kafkajs' "Connection error: …" messages. */
const TLS_FAILURE =
  /certificate|self[- ]signed|unable to verify|unable to get (local )?issuer|hostname\/IP does not match|altnames|ERR_TLS|SSL routines|wrong version number|handshake|alert/i;

/**
 * The first connection, made with no retries so that the two mistakes that retries cannot fix
 * fail start-up at once with a message that names the setting to check: wrong credentials
 * (kafkajs already treats them as non-retriable) and a broker certificate the CA does not
 * verify (kafkajs would retry that like any connection error). Any other
 * failure (broker not up yet, ...) is left to the normal, retrying start-up.
 */
export async function checkKafkaSecurity(
  brokers: string[],
  clientId: string,
  log: Logger,
  s: KafkaSecurity,
): Promise<void> {
  // A client of its own: kafkajs' broker pool retries connections with the client's settings.
  const admin = kafkaClient(brokers, `${clientId}-preflight`, log, s, 0).admin();
  try {
    await admin.connect();
  } catch (e) {
    const err = e as Error & { name?: string };
    const chain = messages(err);
    if (err.name === 'KafkaJSSASLAuthenticationError' || /SASL|authenticat/i.test(chain)) {
      throw new KafkaSecurityError(
        `Kafka authentication failed (SASL ${s.kafkaSaslMechanism.toUpperCase()} as ${JSON.stringify(s.kafkaSaslUsername ?? '')} at ${brokers.join(',')}): ${chain} ` +
          '- check CG_KAFKA_SASL_MECHANISM, CG_KAFKA_SASL_USERNAME and CG_KAFKA_SASL_PASSWORD',
        'KAFKA_AUTHENTICATION_FAILED',
        { cause: e },
      );
    }
    if (s.kafkaSsl && TLS_FAILURE.test(chain)) {
      throw new KafkaSecurityError(
        `Kafka TLS handshake failed (${brokers.join(',')}): ${chain} - check CG_KAFKA_SSL_CA` +
          (s.kafkaSslCa !== null ? ` (${s.kafkaSslCa})` : ' (unset: the system CAs are used)') +
          ' and that the broker certificate names the host you connect to',
        'KAFKA_TLS_FAILED',
        { cause: e },
      );
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

function messages(e: Error): string {
  const parts: string[] = [];
  for (
    let cur: unknown = e;
    cur instanceof Error && parts.length < 5;
    cur = (cur as { cause?: unknown }).cause
  ) {
    if (!parts.includes(cur.message)) parts.push(cur.message);
  }
  return parts.join(': ');
}
