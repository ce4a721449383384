/**
 * Processor configuration: defaults in one place, read from env vars and CLI flags, validated
 * once at start-up. A bad value fails start-up with the variable's name and what was expected.
 */
import { DEFAULT_GRACE_MS } from '../engine/fleet';

export type InputFormat = 'auto' | 'avro' | 'json';

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
  replicationFactor: number;
  inputFormat: InputFormat;
  graceMs: number;
  /** Extra wall-clock delay before a closed session's memory is freed (beyond graceMs). */
  sweepDelayMs: number;
  transactionTimeoutMs: number;
  sessionTimeoutMs: number;
  partitionsConsumedConcurrently: number;
  maxBytesPerPartition: number;
  logLevel: string;
  /** HTTP server for /metrics, /healthz, /readyz, /sessions/{id}. */
  httpHost: string;
  /** 0: any free port. */
  httpPort: number;
  httpSessions: boolean;
  /** When set, /sessions requires `Authorization: Bearer <token>`. */
  httpSessionsToken: string | null;
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
  replicationFactor: 1,
  inputFormat: 'auto',
  graceMs: DEFAULT_GRACE_MS,
  sweepDelayMs: DEFAULT_GRACE_MS,
  // Short, so a restarted instance is not blocked long by a crashed one's open transaction.
  transactionTimeoutMs: 10_000,
  sessionTimeoutMs: 10_000,
  partitionsConsumedConcurrently: 3,
  maxBytesPerPartition: 1_048_576,
  logLevel: 'info',
  httpHost: '0.0.0.0',
  httpPort: 9464,
  httpSessions: true,
  httpSessionsToken: null,
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
  inputFormat: 'CG_INPUT_FORMAT',
  graceMs: 'CG_GRACE_MS',
  sweepDelayMs: 'CG_SWEEP_DELAY_MS',
  transactionTimeoutMs: 'CG_TRANSACTION_TIMEOUT_MS',
  sessionTimeoutMs: 'CG_SESSION_TIMEOUT_MS',
  partitionsConsumedConcurrently: 'CG_PARTITIONS_CONCURRENTLY',
  maxBytesPerPartition: 'CG_MAX_BYTES_PER_PARTITION',
  logLevel: 'CG_LOG_LEVEL',
  httpHost: 'CG_HTTP_HOST',
  httpPort: 'CG_HTTP_PORT',
  httpSessions: 'CG_HTTP_SESSIONS',
  httpSessionsToken: 'CG_HTTP_SESSIONS_TOKEN',
};

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
}

type Source = Partial<Record<keyof Config, string | undefined>>;

function positiveInt(key: keyof Config, raw: string, min = 1): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new ConfigError(`${ENV_NAMES[key]} (--${kebab(key)}): expected an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
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
    const v = flags[key] ?? env[ENV_NAMES[key]];
    if (v !== undefined && v.trim() !== '') raw[key] = v.trim();
  }
  const c: Config = { ...DEFAULTS };
  for (const [k, v] of Object.entries(raw) as [keyof Config, string][]) {
    switch (k) {
      case 'brokers':
        c.brokers = v.split(',').map((b) => b.trim()).filter(Boolean);
        for (const b of c.brokers) {
          if (!/^[^\s:]+:\d+$/.test(b)) throw new ConfigError(`KAFKA_BROKERS (--brokers): expected host:port[,host:port], got ${JSON.stringify(b)}`);
        }
        break;
      case 'registryUrl':
        if (!/^https?:\/\/\S+$/.test(v)) throw new ConfigError(`SCHEMA_REGISTRY_URL (--registry-url): expected an http(s) URL, got ${JSON.stringify(v)}`);
        c.registryUrl = v.replace(/\/+$/, '');
        break;
      case 'inputFormat':
        if (v !== 'auto' && v !== 'avro' && v !== 'json') throw new ConfigError(`CG_INPUT_FORMAT (--input-format): expected auto, avro or json, got ${JSON.stringify(v)}`);
        c.inputFormat = v;
        break;
      case 'logLevel':
        if (!LOG_LEVELS.includes(v)) throw new ConfigError(`CG_LOG_LEVEL (--log-level): expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(v)}`);
        c.logLevel = v;
        break;
      case 'partitions':
      case 'replicationFactor':
      case 'transactionTimeoutMs':
      case 'sessionTimeoutMs':
      case 'partitionsConsumedConcurrently':
      case 'maxBytesPerPartition':
        c[k] = positiveInt(k, v);
        break;
      case 'graceMs':
      case 'sweepDelayMs':
      case 'httpPort':
        c[k] = positiveInt(k, v, 0);
        if (k === 'httpPort' && c.httpPort > 65535) throw new ConfigError(`CG_HTTP_PORT (--http-port): expected 0..65535, got ${v}`);
        break;
      case 'httpSessions':
        if (v !== 'true' && v !== 'false') throw new ConfigError(`CG_HTTP_SESSIONS (--http-sessions): expected true or false, got ${JSON.stringify(v)}`);
        c.httpSessions = v === 'true';
        break;
      case 'httpSessionsToken':
        c.httpSessionsToken = v;
        break;
      default:
        c[k] = v;
    }
  }
  return c;
}

/** The processor writes Avro: with an external cluster it needs that cluster's registry. */
export function requireRegistry(c: Config): void {
  if (c.registryUrl === null && c.brokers.length > 0) {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (outputs are Avro); leave both unset for the embedded local services',
    );
  }
}
