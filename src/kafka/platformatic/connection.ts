/**
 * Where and how @platformatic/kafka connects: the library's base client options (every client
 * of it, Admin, Consumer and Producer, takes them) from the Config, and the Node version it
 * needs. Only types of the library are imported here, so that the check of the version runs
 * before anything loads it (src/cli/run.ts).
 *
 * Every security setting of the project has a counterpart in the library: TLS with the system
 * CAs or a CA file, with or without verification, and SASL PLAIN, SCRAM-SHA-256 and
 * SCRAM-SHA-512 (`SASL_MECHANISMS`, src/config/settings.ts). A mechanism added there without
 * one here does not compile (`MECHANISMS` is total).
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import type { BaseOptions, SASLMechanismValue, SASLOptions } from '@platformatic/kafka';
import type { Config, SaslMechanism } from '../../config/config';
import { ConfigError, ENV_NAMES } from '../../config/config';
import { CONNECTION_TIMEOUT_MS, type KafkaSecurity } from '../client';

/** What the library is told of the cluster: where it is, who connects, how. */
export type Connection = Pick<Config, 'brokers' | 'clientId'> & KafkaSecurity;

/** The library's name of each SASL mechanism of the project. */
const MECHANISMS: Record<Exclude<SaslMechanism, 'none'>, SASLMechanismValue> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

/** TLS towards the brokers, or none (CG_KAFKA_SSL, CG_KAFKA_SSL_CA, CG_KAFKA_SSL_REJECT_UNAUTHORIZED). */
export function tlsOptions(s: KafkaSecurity): TlsOptions | undefined {
  if (!s.kafkaSsl) return undefined;
  return {
    rejectUnauthorized: s.kafkaSslRejectUnauthorized,
    ...(s.kafkaSslCa !== null ? { ca: [readFileSync(s.kafkaSslCa, 'utf8')] } : {}),
  };
}

/** SASL towards the brokers, or none (CG_KAFKA_SASL_MECHANISM and its credentials). */
export function saslOptions(s: KafkaSecurity): SASLOptions | undefined {
  if (s.kafkaSaslMechanism === 'none') return undefined;
  return {
    mechanism: MECHANISMS[s.kafkaSaslMechanism],
    username: s.kafkaSaslUsername ?? '',
    password: s.kafkaSaslPassword ?? '',
  };
}

/** The base options of every client of the library, for the cluster of `c`. */
export function baseOptions(c: Connection): BaseOptions {
  const tls = tlsOptions(c);
  const sasl = saslOptions(c);
  return {
    clientId: c.clientId,
    bootstrapBrokers: [...c.brokers],
    connectTimeout: CONNECTION_TIMEOUT_MS,
    ...(tls !== undefined ? { tls } : {}),
    ...(sasl !== undefined ? { sasl } : {}),
  };
}

/** The oldest Node @platformatic/kafka 2.12.1 runs on (its `engines`). */
export const PLATFORMATIC_MIN_NODE = '22.22.0';

/** Whether `version` (as `process.versions.node`) is at least `min` (both `major.minor.patch`). */
export function nodeAtLeast(version: string, min: string): boolean {
  const parts = (v: string) => v.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(version), parts(min)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** Refuses CG_KAFKA_CLIENT=platformatic on a Node older than the library needs: one clear line. */
export function requirePlatformaticNode(version: string = process.versions.node): void {
  if (nodeAtLeast(version, PLATFORMATIC_MIN_NODE)) return;
  throw new ConfigError(
    `${ENV_NAMES.kafkaClient}=platformatic needs Node ≥ ${PLATFORMATIC_MIN_NODE} (this is ${version}): ` +
      `run on a newer Node, or set ${ENV_NAMES.kafkaClient}=kafkajs`,
  );
}
