/**
 * Processor configuration: defaults in one place, read from env vars and CLI flags, validated
 * once at start-up. A bad value fails start-up with the variable's name and what was expected.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { DEFAULT_GRACE_MS } from '../engine/fleet';

export type InputFormat = 'auto' | 'avro' | 'json';
export type SaslMechanism = 'none' | 'plain' | 'scram-sha-256' | 'scram-sha-512';
const SASL_MECHANISMS: readonly SaslMechanism[] = [
  'none',
  'plain',
  'scram-sha-256',
  'scram-sha-512',
];

export interface Config {
  /** Empty: start an embedded local Kafka + registry (`npm start` on a fresh clone). */
  brokers: string[];
  registryUrl: string | null;
  clientId: string;
  groupId: string;
  inputTopic: string;
  verdictTopic: string;
  spillTopic: string;
  auditTopic: string;
  dlqTopic: string;
  /** Compacted changelog of per-session state, partitioned like the input. */
  changelogTopic: string;
  partitions: number;
  /**
   * Replication factor of the topics the processor creates; null (the default): min(3, the
   * cluster's brokers), see `chooseReplication` in src/kafka/topics.ts.
   */
  replicationFactor: number | null;
  /**
   * min.insync.replicas of the topics the processor creates; null (the default): 2 when the
   * replication factor is 3 or more, else the broker's default.
   */
  minInsyncReplicas: number | null;
  inputFormat: InputFormat;
  graceMs: number;
  /** Extra wall-clock delay before a closed session's memory is freed (beyond graceMs). */
  sweepDelayMs: number;
  transactionTimeoutMs: number;
  /**
   * First retry delay of the transactional producers (kafkajs `retry.initialRetryTime`, doubling
   * from there). Short: a transaction begun right after the previous commit gets
   * CONCURRENT_TRANSACTIONS until the coordinator has written the markers (a few ms).
   */
  transactionRetryMs: number;
  sessionTimeoutMs: number;
  partitionsConsumedConcurrently: number;
  maxBytesPerPartition: number;
  /** Most bytes one input fetch returns over all of its partitions (kafkajs `maxBytes`). */
  fetchMaxBytes: number;
  /** Longest a fetch waits for new input before the broker answers empty. */
  fetchMaxWaitMs: number;
  /**
   * Keep the transactional producers' coordinators between transactions instead of kafkajs'
   * FindCoordinator before each of 4 requests of every transaction (src/kafka/coordinatorCache.ts).
   */
  coordinatorCache: boolean;
  logLevel: string;
  /** HTTP server for /metrics, /healthz, /readyz, /sessions/{id}. */
  httpHost: string;
  /** 0: any free port. */
  httpPort: number;
  httpSessions: boolean;
  /** When set, /sessions requires `Authorization: Bearer <token>`. */
  httpSessionsToken: string | null;
  /** SASL towards Kafka; anything but `none` needs a username and a password. */
  kafkaSaslMechanism: SaslMechanism;
  kafkaSaslUsername: string | null;
  /** Secret: redacted in logs (see src/config/redact.ts). Also read from CG_KAFKA_SASL_PASSWORD_FILE. */
  kafkaSaslPassword: string | null;
  /** TLS towards Kafka (SSL or SASL_SSL listeners). */
  kafkaSsl: boolean;
  /** PEM file of the CA(s) that signed the brokers' certificates; null: the system's CAs. */
  kafkaSslCa: string | null;
  kafkaSslRejectUnauthorized: boolean;
  /** Basic auth towards the schema registry. */
  registryUsername: string | null;
  /** Secret: redacted in logs. Also read from CG_REGISTRY_PASSWORD_FILE. */
  registryPassword: string | null;
  /** PEM file of the CA(s) for an https registry; null: the system's CAs. */
  registryCa: string | null;
}

export const DEFAULTS: Config = {
  brokers: [],
  registryUrl: null,
  clientId: 'compaction-guard',
  groupId: 'compaction-guard',
  inputTopic: 'agent.context-changes',
  verdictTopic: 'agent.compaction-verdicts',
  spillTopic: 'agent.spill-requests',
  auditTopic: 'compaction-guard.audit',
  dlqTopic: 'agent.context-changes.dlq',
  changelogTopic: 'compaction-guard.session-state-changelog',
  partitions: 6,
  replicationFactor: null,
  minInsyncReplicas: null,
  inputFormat: 'auto',
  graceMs: DEFAULT_GRACE_MS,
  sweepDelayMs: DEFAULT_GRACE_MS,
  // Short, so a restarted instance is not blocked long by a crashed one's open transaction.
  transactionTimeoutMs: 10_000,
  transactionRetryMs: 10,
  sessionTimeoutMs: 10_000,
  // All of an instance's partitions at once (the default partition count): kafkajs fetches
  // again only when every batch of the last fetch is done, so a second wave adds a transaction.
  partitionsConsumedConcurrently: 6,
  // Big fetches when there is a backlog (a fetch returns as soon as any input arrives, so under
  // steady load they stay small): each batch writes one changelog record per session it
  // touched and costs one transaction, so bigger batches mean fewer of both per event. 8 MiB per
  // partition, 48 MiB per fetch: 1.28× the events/s of 4 / 10 MiB (kafkajs' default total) on
  // a 1M-event backlog in a same-run A/B, for ~210 MB more peak RSS (bench/README.md, session
  // 5; docs/decisions.md 28). Outputs are split per request anyway (src/kafka/outputChunks.ts).
  maxBytesPerPartition: 8 * 1024 * 1024,
  fetchMaxBytes: 48 * 1024 * 1024,
  fetchMaxWaitMs: 100,
  coordinatorCache: true,
  logLevel: 'info',
  httpHost: '0.0.0.0',
  httpPort: 9464,
  httpSessions: true,
  httpSessionsToken: null,
  kafkaSaslMechanism: 'none',
  kafkaSaslUsername: null,
  kafkaSaslPassword: null,
  kafkaSsl: false,
  kafkaSslCa: null,
  kafkaSslRejectUnauthorized: true,
  registryUsername: null,
  registryPassword: null,
  registryCa: null,
};

/** Env var for each setting (flags use the kebab-case key, e.g. `--group-id`). */
export const ENV_NAMES: Readonly<Record<keyof Config, string>> = {
  brokers: 'KAFKA_BROKERS',
  registryUrl: 'SCHEMA_REGISTRY_URL',
  clientId: 'CG_CLIENT_ID',
  groupId: 'CG_GROUP_ID',
  inputTopic: 'CG_INPUT_TOPIC',
  verdictTopic: 'CG_VERDICT_TOPIC',
  spillTopic: 'CG_SPILL_TOPIC',
  auditTopic: 'CG_AUDIT_TOPIC',
  dlqTopic: 'CG_DLQ_TOPIC',
  changelogTopic: 'CG_CHANGELOG_TOPIC',
  partitions: 'CG_PARTITIONS',
  replicationFactor: 'CG_REPLICATION_FACTOR',
  minInsyncReplicas: 'CG_MIN_INSYNC_REPLICAS',
  inputFormat: 'CG_INPUT_FORMAT',
  graceMs: 'CG_GRACE_MS',
  sweepDelayMs: 'CG_SWEEP_DELAY_MS',
  transactionTimeoutMs: 'CG_TRANSACTION_TIMEOUT_MS',
  transactionRetryMs: 'CG_TRANSACTION_RETRY_MS',
  sessionTimeoutMs: 'CG_SESSION_TIMEOUT_MS',
  partitionsConsumedConcurrently: 'CG_PARTITIONS_CONCURRENTLY',
  maxBytesPerPartition: 'CG_MAX_BYTES_PER_PARTITION',
  fetchMaxBytes: 'CG_FETCH_MAX_BYTES',
  fetchMaxWaitMs: 'CG_FETCH_MAX_WAIT_MS',
  coordinatorCache: 'CG_COORDINATOR_CACHE',
  logLevel: 'CG_LOG_LEVEL',
  httpHost: 'CG_HTTP_HOST',
  httpPort: 'CG_HTTP_PORT',
  httpSessions: 'CG_HTTP_SESSIONS',
  httpSessionsToken: 'CG_HTTP_SESSIONS_TOKEN',
  kafkaSaslMechanism: 'CG_KAFKA_SASL_MECHANISM',
  kafkaSaslUsername: 'CG_KAFKA_SASL_USERNAME',
  kafkaSaslPassword: 'CG_KAFKA_SASL_PASSWORD',
  kafkaSsl: 'CG_KAFKA_SSL',
  kafkaSslCa: 'CG_KAFKA_SSL_CA',
  kafkaSslRejectUnauthorized: 'CG_KAFKA_SSL_REJECT_UNAUTHORIZED',
  registryUsername: 'CG_REGISTRY_USERNAME',
  registryPassword: 'CG_REGISTRY_PASSWORD',
  registryCa: 'CG_REGISTRY_CA',
};

/** What a null default means, for --help (settings whose default is chosen at start-up). */
export const AUTO_DEFAULTS: Partial<Record<keyof Config, string>> = {
  replicationFactor: 'min(3, brokers in the cluster)',
  minInsyncReplicas: '2 when the replication factor is 3 or more, else the broker default',
};

/** Settings that are secrets: never logged, and also readable from a file via `<ENV>_FILE`. */
export const SECRET_KEYS: readonly (keyof Config)[] = [
  'kafkaSaslPassword',
  'registryPassword',
  'httpSessionsToken',
];

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
}

type Source = Partial<Record<keyof Config, string | undefined>>;

function flagName(key: keyof Config): string {
  return `${ENV_NAMES[key]} (--${kebab(key)})`;
}

function bool(key: keyof Config, v: string): boolean {
  if (v !== 'true' && v !== 'false')
    throw new ConfigError(`${flagName(key)}: expected true or false, got ${JSON.stringify(v)}`);
  return v === 'true';
}

/** A PEM file that exists, is readable and holds at least one certificate. */
function pemFile(key: keyof Config, path: string): string {
  try {
    accessSync(path, constants.R_OK);
  } catch (e) {
    throw new ConfigError(
      `${flagName(key)}: cannot read the CA file ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${flagName(key)}: cannot read the CA file ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(
      `${flagName(key)}: ${JSON.stringify(path)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  }
  return path;
}

/** `<ENV>_FILE` for a secret: the file's content without the trailing newline. */
function secretFromFile(key: keyof Config, env: NodeJS.ProcessEnv): string | undefined {
  const name = `${ENV_NAMES[key]}_FILE`;
  const path = env[name];
  if (path === undefined || path.trim() === '') return undefined;
  try {
    return readFileSync(path.trim(), 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    throw new ConfigError(
      `${name}: cannot read ${JSON.stringify(path.trim())}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

function positiveInt(key: keyof Config, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new ConfigError(
      `${ENV_NAMES[key]} (--${kebab(key)}): expected an integer ≥ ${min}, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Flags win over env vars, env vars over defaults. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: Source = {}): Config {
  const raw: Source = {};
  for (const key of Object.keys(DEFAULTS) as (keyof Config)[]) {
    const v =
      flags[key] ??
      env[ENV_NAMES[key]] ??
      (SECRET_KEYS.includes(key) ? secretFromFile(key, env) : undefined);
    if (v === undefined || v.trim() === '') continue;
    // Passwords keep their exact bytes (one may end in a space); everything else is trimmed.
    raw[key] = key === 'kafkaSaslPassword' || key === 'registryPassword' ? v : v.trim();
  }
  const c: Config = { ...DEFAULTS };
  for (const [k, v] of Object.entries(raw) as [keyof Config, string][]) {
    switch (k) {
      case 'brokers':
        c.brokers = v
          .split(',')
          .map((b) => b.trim())
          .filter(Boolean);
        for (const b of c.brokers) {
          if (!/^[^\s:]+:\d+$/.test(b))
            throw new ConfigError(
              `KAFKA_BROKERS (--brokers): expected host:port[,host:port], got ${JSON.stringify(b)}`,
            );
        }
        break;
      case 'registryUrl':
        if (!/^https?:\/\/\S+$/.test(v))
          throw new ConfigError(
            `SCHEMA_REGISTRY_URL (--registry-url): expected an http(s) URL, got ${JSON.stringify(v)}`,
          );
        c.registryUrl = v.replace(/\/+$/, '');
        break;
      case 'inputFormat':
        if (v !== 'auto' && v !== 'avro' && v !== 'json')
          throw new ConfigError(
            `CG_INPUT_FORMAT (--input-format): expected auto, avro or json, got ${JSON.stringify(v)}`,
          );
        c.inputFormat = v;
        break;
      case 'logLevel':
        if (!LOG_LEVELS.includes(v))
          throw new ConfigError(
            `CG_LOG_LEVEL (--log-level): expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(v)}`,
          );
        c.logLevel = v;
        break;
      case 'replicationFactor':
      case 'minInsyncReplicas':
        c[k] = positiveInt(k, v);
        break;
      case 'partitions':
      case 'transactionTimeoutMs':
      case 'sessionTimeoutMs':
      case 'partitionsConsumedConcurrently':
      case 'maxBytesPerPartition':
      case 'fetchMaxBytes':
      case 'transactionRetryMs':
        c[k] = positiveInt(k, v);
        break;
      case 'fetchMaxWaitMs':
        c[k] = positiveInt(k, v, 0);
        break;
      case 'graceMs':
      case 'sweepDelayMs':
      case 'httpPort':
        c[k] = positiveInt(k, v, 0);
        if (k === 'httpPort' && c.httpPort > 65535)
          throw new ConfigError(`CG_HTTP_PORT (--http-port): expected 0..65535, got ${v}`);
        break;
      case 'httpSessions':
        if (v !== 'true' && v !== 'false')
          throw new ConfigError(
            `CG_HTTP_SESSIONS (--http-sessions): expected true or false, got ${JSON.stringify(v)}`,
          );
        c.httpSessions = v === 'true';
        break;
      case 'httpSessionsToken':
        c.httpSessionsToken = v;
        break;
      case 'kafkaSaslMechanism': {
        const m = v.toLowerCase() as SaslMechanism;
        if (!SASL_MECHANISMS.includes(m))
          throw new ConfigError(
            `${flagName(k)}: expected one of ${SASL_MECHANISMS.join(', ')}, got ${JSON.stringify(v)}`,
          );
        c.kafkaSaslMechanism = m;
        break;
      }
      case 'kafkaSsl':
      case 'kafkaSslRejectUnauthorized':
      case 'coordinatorCache':
        c[k] = bool(k, v);
        break;
      case 'kafkaSslCa':
      case 'registryCa':
        c[k] = pemFile(k, v);
        break;
      case 'kafkaSaslUsername':
      case 'kafkaSaslPassword':
      case 'registryUsername':
      case 'registryPassword':
        c[k] = v;
        break;
      default:
        c[k] = v;
    }
  }
  validateSecurity(c, raw);
  if (
    c.replicationFactor !== null &&
    c.minInsyncReplicas !== null &&
    c.minInsyncReplicas > c.replicationFactor
  ) {
    throw new ConfigError(
      `${flagName('minInsyncReplicas')}=${c.minInsyncReplicas} is more than ${flagName('replicationFactor')}=${c.replicationFactor}: no write to such a topic could ever succeed`,
    );
  }
  return c;
}

/** Combinations that cannot work are start-up errors, not surprises at the first connection. */
function validateSecurity(c: Config, raw: Source): void {
  if (c.kafkaSaslMechanism !== 'none') {
    const missing = (['kafkaSaslUsername', 'kafkaSaslPassword'] as const).filter(
      (k) => c[k] === null,
    );
    if (missing.length > 0) {
      throw new ConfigError(
        `${flagName('kafkaSaslMechanism')}=${c.kafkaSaslMechanism} needs ${missing.map((k) => `${ENV_NAMES[k]}${k === 'kafkaSaslPassword' ? ' (or _FILE)' : ''}`).join(' and ')}`,
      );
    }
  } else if (c.kafkaSaslUsername !== null || c.kafkaSaslPassword !== null) {
    throw new ConfigError(
      `${flagName('kafkaSaslUsername')} / CG_KAFKA_SASL_PASSWORD are set but ${flagName('kafkaSaslMechanism')} is none: set the mechanism (plain, scram-sha-256 or scram-sha-512)`,
    );
  }
  if (c.kafkaSslCa !== null) {
    // A CA file only makes sense with TLS: it turns TLS on unless TLS was explicitly switched off.
    if (raw.kafkaSsl === 'false')
      throw new ConfigError(
        `${flagName('kafkaSslCa')} is set but ${flagName('kafkaSsl')} is false`,
      );
    c.kafkaSsl = true;
  }
  if ((c.registryUsername === null) !== (c.registryPassword === null)) {
    throw new ConfigError(
      `registry basic auth needs both ${ENV_NAMES.registryUsername} and ${ENV_NAMES.registryPassword} (or _FILE)`,
    );
  }
  if (c.registryCa !== null && c.registryUrl !== null && !c.registryUrl.startsWith('https://')) {
    throw new ConfigError(
      `${flagName('registryCa')} is set but ${flagName('registryUrl')} is not https: ${c.registryUrl}`,
    );
  }
}

/**
 * The processor writes Avro: with an external cluster it needs that cluster's registry. Without
 * brokers it starts embedded services with their own registry, so a registry URL given alone
 * would be silently replaced: more likely a forgotten KAFKA_BROKERS than a wish for the
 * embedded services, so it stops start-up instead (fail closed).
 */
export function requireRegistry(c: Config): void {
  if (c.registryUrl === null && c.brokers.length > 0) {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (outputs are Avro); leave both unset for the embedded local services',
    );
  }
  if (c.registryUrl !== null && c.brokers.length === 0) {
    throw new ConfigError(
      // The URL is not echoed: it may carry credentials (https://user:password@host).
      `${flagName('registryUrl')} is set but ${flagName('brokers')} is not: set KAFKA_BROKERS to the cluster that registry serves, or leave both unset for the embedded local services`,
    );
  }
}
