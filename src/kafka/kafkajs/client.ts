/** A kafkajs client whose logs go through pino (one JSON log stream), with optional TLS and SASL. */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Kafka, type LogEntry, type SASLOptions } from 'kafkajs';
import {
  AUTHENTICATION_TIMEOUT_MS,
  CONNECTION_TIMEOUT_MS,
  type KafkaConnectionOptions,
  type KafkaSecurity,
} from '../transport/connection';
import { kafkajsEntryLevel, kafkajsLogLevel } from './logLevels';

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

export function kafkajsClient(o: KafkaConnectionOptions): Kafka {
  const { log, security } = o;
  const kafkaLog = log.child({ component: 'kafkajs' });
  const ssl = security ? kafkaSsl(security) : undefined;
  const sasl = security ? kafkaSasl(security) : undefined;
  return new Kafka({
    clientId: o.clientId,
    brokers: o.brokers,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(sasl !== undefined ? { sasl } : {}),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    authenticationTimeout: AUTHENTICATION_TIMEOUT_MS,
    // pino filters again, but kafkajs skips building entries below its own threshold.
    logLevel: kafkajsLogLevel(log.level),
    retry: { retries: o.retries, initialRetryTime: 200 },
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[kafkajsEntryLevel(level, entry)](rest, message);
      },
  });
}
