/**
 * Every setting, declared once: its env var, its flag (the kebab-case key unless named), its
 * default, how a raw value is validated and parsed, and its help text. The `Config` type, the
 * defaults, the parsing and `--help` all derive from these tables (src/config/config.ts), and
 * a unit test checks the configuration tables of docs/operations.md against them.
 *
 * - SETTINGS: `compaction-guard run` (env var or flag; the on-call commands share a subset).
 * - TOOL_SETTINGS: the on-call tools and the client library (env var or the tool's flag).
 * - SERVICE_SETTINGS: the embedded local services of `npm start` and the tests (env only).
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_GRACE_MS, DEFAULT_IDLE_MS } from '../engine/fleet';
import { errorClass } from '../errors';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../kafka/recordLimits';

/** A setting has an invalid value: the message names the variable and what was expected. */
export class ConfigError extends errorClass('CONFIG_INVALID') {}

/** Validates a raw (trimmed unless `exact`) value; `name` is e.g. `CG_PARTITIONS (--partitions)`. */
export type Parse<T> = (raw: string, name: string) => T;

export interface Setting<T> {
  env: string;
  /** The CLI flag without `--`; null: env only. Default: the key in kebab case. */
  flag?: string | null;
  default: T;
  /** How `--help` shows the default, when `String(default)` would not say it. */
  shown?: string;
  help: string;
  parse: Parse<T>;
  /** A secret: never logged, and also read from the file named by `<ENV>_FILE`. */
  secret?: boolean;
  /** Keep the exact bytes (a password may end in a space); everything else is trimmed. */
  exact?: boolean;
}

/** The value type comes from `parse` alone (a literal default does not narrow or widen it). */
const setting = <T>(s: Omit<Setting<T>, 'default'> & { default: NoInfer<T> }): Setting<T> => s;

// ---- validation -------------------------------------------------------------------------------

const text: Parse<string> = (raw) => raw;

function integer(min: number, max = Number.MAX_SAFE_INTEGER): Parse<number> {
  return (raw, name) => {
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min)
      throw new ConfigError(`${name}: expected an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
    if (n > max) throw new ConfigError(`${name}: expected ${min}..${max}, got ${raw}`);
    return n;
  };
}

const bool: Parse<boolean> = (raw, name) => {
  if (raw !== 'true' && raw !== 'false')
    throw new ConfigError(`${name}: expected true or false, got ${JSON.stringify(raw)}`);
  return raw === 'true';
};

/** One of `values`; `expected` is how the message lists them. */
function oneOf<const V extends string>(
  values: readonly V[],
  expected = `one of ${values.join(', ')}`,
  normalise: (raw: string) => string = (raw) => raw,
): Parse<V> {
  return (raw, name) => {
    const v = normalise(raw) as V;
    if (!values.includes(v))
      throw new ConfigError(`${name}: expected ${expected}, got ${JSON.stringify(raw)}`);
    return v;
  };
}

const brokerList: Parse<string[]> = (raw, name) => {
  const brokers = raw
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  for (const b of brokers)
    if (!/^[^\s:]+:\d+$/.test(b))
      throw new ConfigError(`${name}: expected host:port[,host:port], got ${JSON.stringify(b)}`);
  return brokers;
};

const httpUrl: Parse<string> = (raw, name) => {
  if (!/^https?:\/\/\S+$/.test(raw))
    throw new ConfigError(`${name}: expected an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw.replace(/\/+$/, '');
};

/**
 * `user:password@` in a URL: the whole URL is logged, shown in errors and passed around, so its
 * credentials would be too. Matched on the raw text, so the URL is never parsed or echoed.
 */
export function hasUrlCredentials(raw: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw.trim());
}

/** The refusal of a registry URL with `user:password@`: where the credentials go instead. */
export function urlCredentialsRefused(name: string): ConfigError {
  return new ConfigError(
    `${name}: credentials in the URL are refused (the URL is logged and shown in errors); ` +
      'give them as CG_REGISTRY_USERNAME and CG_REGISTRY_PASSWORD (or CG_REGISTRY_PASSWORD_FILE)',
  );
}

/** The schema registry's URL: an http(s) URL without credentials (they have their own settings). */
const registryUrl: Parse<string> = (raw, name) => {
  if (hasUrlCredentials(raw)) throw urlCredentialsRefused(name);
  if (!/^https?:\/\/\S+$/.test(raw))
    throw new ConfigError(
      `${name}: expected an http(s) URL such as https://registry:8081 (the value is not shown: it may hold credentials)`,
    );
  return httpUrl(raw, name);
};

/** A PEM file that exists, is readable and holds at least one certificate. */
const pemFile: Parse<string> = (path, name) => {
  let pem: string;
  try {
    accessSync(path, constants.R_OK);
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${name}: cannot read the CA file ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConfigError(
      `${name}: ${JSON.stringify(path)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  return path;
};

/** A path as given (a relative one is resolved against the working directory when it is read). */
const filePath: Parse<string> = (raw) => raw;

/** An optional value: unset is null. */
const optional = <T>(parse: Parse<T>): Parse<T | null> => parse;

export const INPUT_FORMATS = ['auto', 'avro', 'json'] as const;
export const SASL_MECHANISMS = ['none', 'plain', 'scram-sha-256', 'scram-sha-512'] as const;
export const KAFKA_CLIENTS = ['kafkajs', 'platformatic'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

// ---- the settings of `run` --------------------------------------------------------------------

export const SETTINGS = {
  brokers: setting({
    env: 'KAFKA_BROKERS',
    default: [],
    shown: '(embedded)',
    help: '`host:port,...` of the Kafka cluster (run: empty starts the embedded local Kafka + registry)',
    parse: brokerList,
  }),
  registryUrl: setting({
    env: 'SCHEMA_REGISTRY_URL',
    default: null,
    shown: '(embedded)',
    help: 'Confluent-compatible schema registry (run: required with KAFKA_BROKERS, refused without it)',
    parse: optional(registryUrl),
  }),
  clientId: setting({
    env: 'CG_CLIENT_ID',
    default: 'compaction-guard',
    help: 'Kafka client id',
    parse: text,
  }),
  groupId: setting({
    env: 'CG_GROUP_ID',
    default: 'compaction-guard',
    help: 'consumer group; also prefixes transactional ids',
    parse: text,
  }),
  inputTopic: setting({
    env: 'CG_INPUT_TOPIC',
    default: 'agent.context-changes',
    help: 'input topic (context-change events)',
    parse: text,
  }),
  verdictTopic: setting({
    env: 'CG_VERDICT_TOPIC',
    default: 'agent.compaction-verdicts',
    help: 'verdict topic',
    parse: text,
  }),
  spillTopic: setting({
    env: 'CG_SPILL_TOPIC',
    default: 'agent.spill-requests',
    help: 'spill-request topic',
    parse: text,
  }),
  auditTopic: setting({
    env: 'CG_AUDIT_TOPIC',
    default: 'compaction-guard.audit',
    help: 'audit topic',
    parse: text,
  }),
  dlqTopic: setting({
    env: 'CG_DLQ_TOPIC',
    default: 'agent.context-changes.dlq',
    help: 'dead-letter topic',
    parse: text,
  }),
  changelogTopic: setting({
    env: 'CG_CHANGELOG_TOPIC',
    default: 'compaction-guard.session-state-changelog',
    help: 'compacted changelog of per-session state, partitioned like the input',
    parse: text,
  }),
  partitions: setting({
    env: 'CG_PARTITIONS',
    default: 6,
    help: 'partitions of topics created by the processor',
    parse: integer(1),
  }),
  replicationFactor: setting({
    env: 'CG_REPLICATION_FACTOR',
    default: null,
    shown: 'min(3, brokers)',
    help: 'replication factor of the topics the processor creates (src/kafka/topics.ts chooseReplication)',
    parse: optional(integer(1)),
  }),
  minInsyncReplicas: setting({
    env: 'CG_MIN_INSYNC_REPLICAS',
    default: null,
    shown: '2 when RF ≥ 3',
    help: 'min.insync.replicas of the topics the processor creates',
    parse: optional(integer(1)),
  }),
  inputFormat: setting({
    env: 'CG_INPUT_FORMAT',
    default: 'auto',
    help: '`auto` (magic byte 0: Avro, else JSON), `avro` or `json`',
    parse: oneOf(INPUT_FORMATS, 'auto, avro or json'),
  }),
  graceMs: setting({
    env: 'CG_GRACE_MS',
    default: DEFAULT_GRACE_MS,
    help: 'SessionClosed grace period, event time (contract §4)',
    parse: integer(0),
  }),
  idleMs: setting({
    env: 'CG_IDLE_MS',
    default: DEFAULT_IDLE_MS,
    shown: '2592000000 (30 days)',
    help: "idle period, event time: a session's state is dropped when an event comes more than this after its last one (contract §4)",
    parse: integer(1),
  }),
  sweepDelayMs: setting({
    env: 'CG_SWEEP_DELAY_MS',
    default: DEFAULT_GRACE_MS,
    help: "extra wall-clock delay before a closed or idle session's memory is freed (beyond the grace or idle period)",
    parse: integer(0),
  }),
  maxSessions: setting({
    env: 'CG_MAX_SESSIONS',
    // ~1 GB of heap at the measured 1.9 KB of a typical session (0.7 KB for a tiny one), half of
    // a 2 GB heap and a quarter of Node's 4 GB default on a large host (docs/decisions.md 121).
    default: 500_000,
    help:
      'sessions one instance holds at most; at the cap, events of new sessions are counted and not stored, ' +
      'and their requests refused UNKNOWN_SESSION (docs/contract.md §8 "Capacity")',
    parse: integer(1),
  }),
  transactionTimeoutMs: setting({
    env: 'CG_TRANSACTION_TIMEOUT_MS',
    // Short, so a restarted instance is not blocked long by a crashed one's open transaction.
    default: 10_000,
    help: 'producer transaction timeout',
    parse: integer(1),
  }),
  transactionRetryMs: setting({
    env: 'CG_TRANSACTION_RETRY_MS',
    default: 10,
    help:
      'first retry delay of the transactional producers (kafkajs `retry.initialRetryTime`, doubling; on platformatic every retry ' +
      'waits this, except CONCURRENT_TRANSACTIONS: from 1 ms, doubling up to it): short, because a transaction begun right ' +
      'after a commit gets CONCURRENT_TRANSACTIONS until the markers are written',
    parse: integer(1),
  }),
  transactionBudgetMs: setting({
    env: 'CG_TRANSACTION_BUDGET_MS',
    // Well below the session timeout: partitions processed concurrently share one event loop,
    // and a transaction's commit comes on top (docs/decisions.md 162).
    default: 500,
    help:
      'planning time of one transaction: a fetched batch that takes longer is committed in several ' +
      'transactions, with a consumer heartbeat between them (keep it well below CG_SESSION_TIMEOUT_MS)',
    parse: integer(1),
  }),
  transactionBudgetBytes: setting({
    env: 'CG_TRANSACTION_BUDGET_BYTES',
    default: 4 * 1024 * 1024,
    help:
      'estimated bytes one transaction writes (outputs, dead letters, ~1 KiB per changelog state): ' +
      'a fetched batch that would write more is committed in several transactions',
    parse: integer(1),
  }),
  sessionTimeoutMs: setting({
    env: 'CG_SESSION_TIMEOUT_MS',
    default: 10_000,
    help: 'consumer group session timeout',
    parse: integer(1),
  }),
  partitionsConsumedConcurrently: setting({
    env: 'CG_PARTITIONS_CONCURRENTLY',
    // All of an instance's partitions at once (the default partition count): kafkajs fetches
    // again only when every batch of the last fetch is done, so a second wave adds a transaction.
    default: 6,
    help: 'partitions processed in parallel (set ≥ the partitions an instance owns)',
    parse: integer(1),
  }),
  maxBytesPerPartition: setting({
    env: 'CG_MAX_BYTES_PER_PARTITION',
    // Big fetches when there is a backlog (a fetch returns as soon as any input arrives, so under
    // steady load they stay small): each batch writes one changelog record per session it
    // touched and costs one transaction, so bigger batches mean fewer of both per event. 8 MiB
    // per partition, 48 MiB per fetch: 1.28× the events/s of 4 / 10 MiB (kafkajs' default total)
    // on a 1M-event backlog in a same-run A/B, for ~210 MB more peak RSS (bench/README.md,
    // "End to end"; docs/decisions.md 28). Outputs are split per request anyway
    // (src/kafka/outputChunks.ts).
    default: 8 * 1024 * 1024,
    help: 'fetch size per partition (bounds a transaction)',
    parse: integer(1),
  }),
  fetchMaxBytes: setting({
    env: 'CG_FETCH_MAX_BYTES',
    default: 48 * 1024 * 1024,
    help: 'fetch size over all partitions of one fetch (kafkajs `maxBytes`)',
    parse: integer(1),
  }),
  fetchMaxWaitMs: setting({
    env: 'CG_FETCH_MAX_WAIT_MS',
    default: 100,
    help: 'longest an input fetch waits for new records before the broker answers empty',
    parse: integer(0),
  }),
  kafkaClient: setting({
    env: 'CG_KAFKA_CLIENT',
    default: 'kafkajs',
    help:
      'the Kafka client of the processor, the client library and the commands: kafkajs (one ' +
      'transactional producer per input partition) or platformatic (@platformatic/kafka: one ' +
      "transactional producer per process, offsets committed with the group's generation; needs " +
      'Node ≥ 22.22)',
    parse: oneOf(KAFKA_CLIENTS),
  }),
  instanceId: setting({
    env: 'CG_INSTANCE_ID',
    default: null,
    shown: 'random per start',
    help:
      "this process's part of its transactional id with CG_KAFKA_CLIENT=platformatic " +
      '(<group>-<input topic>-<instance id>): a stable one lets a restart abort its own open ' +
      'transaction at once; two live processes must never share one (the second fences the first)',
    parse: optional(text),
  }),
  coordinatorCache: setting({
    env: 'CG_COORDINATOR_CACHE',
    default: true,
    help:
      "keep the transactional producers' coordinators between transactions instead of kafkajs' " +
      'FindCoordinator before 4 requests of each (src/kafka/kafkajs/coordinatorCache.ts)',
    parse: bool,
  }),
  logLevel: setting<string>({
    env: 'CG_LOG_LEVEL',
    default: 'info',
    help: "pino level, for kafkajs' own logs too (kafkajs' internal chatter is at debug)",
    parse: oneOf(LOG_LEVELS),
  }),
  logFormat: setting<LogFormat>({
    env: 'CG_LOG_FORMAT',
    default: 'auto',
    help: 'json (one JSON object per line), pretty (readable lines), or auto: pretty when stdout is a terminal, JSON otherwise',
    parse: oneOf(LOG_FORMATS),
  }),
  httpHost: setting({
    env: 'CG_HTTP_HOST',
    default: '127.0.0.1',
    help:
      'bind address of the HTTP server (/metrics, /healthz, /readyz, /sessions/{id}); ' +
      'any other than a loopback address needs CG_HTTP_SESSIONS_TOKEN or CG_HTTP_SESSIONS=false',
    parse: text,
  }),
  httpPort: setting({
    env: 'CG_HTTP_PORT',
    default: 9464,
    help: 'HTTP server port (0: any free port)',
    parse: integer(0, 65535),
  }),
  httpSessions: setting({
    env: 'CG_HTTP_SESSIONS',
    default: true,
    help: 'serve /sessions/{id}',
    parse: bool,
  }),
  httpSessionsToken: setting({
    env: 'CG_HTTP_SESSIONS_TOKEN',
    default: null,
    help: 'when set, /sessions requires `Authorization: Bearer <token>`',
    parse: optional(text),
    secret: true,
  }),
  httpRequestTimeoutMs: setting({
    env: 'CG_HTTP_REQUEST_TIMEOUT_MS',
    default: 10_000,
    help: 'longest the HTTP server waits for a whole request (headers included); then 408 and the connection is closed',
    parse: integer(1),
  }),
  httpMaxConnections: setting({
    env: 'CG_HTTP_MAX_CONNECTIONS',
    default: 64,
    help: 'open HTTP connections at most; further ones are closed at once',
    parse: integer(1),
  }),
  httpMaxRequestBytes: setting({
    env: 'CG_HTTP_MAX_REQUEST_BYTES',
    default: 16_384,
    help: 'largest HTTP request (headers, and any body) the server takes; larger ones get 431 or 413',
    parse: integer(1024),
  }),
  allowPlaintextAuth: setting({
    env: 'CG_ALLOW_PLAINTEXT_AUTH',
    default: false,
    help: 'accept SASL PLAIN towards Kafka without TLS, or registry basic auth over http:// (passwords in clear on the network)',
    parse: bool,
  }),
  kafkaSaslMechanism: setting({
    env: 'CG_KAFKA_SASL_MECHANISM',
    default: 'none',
    help: 'SASL towards Kafka; anything but none needs a username and a password',
    parse: oneOf(SASL_MECHANISMS, undefined, (raw) => raw.toLowerCase()),
  }),
  kafkaSaslUsername: setting({
    env: 'CG_KAFKA_SASL_USERNAME',
    default: null,
    help: 'SASL user (required with a mechanism)',
    parse: optional(text),
  }),
  kafkaSaslPassword: setting({
    env: 'CG_KAFKA_SASL_PASSWORD',
    default: null,
    help: 'SASL password',
    parse: optional(text),
    secret: true,
    exact: true,
  }),
  kafkaSsl: setting({
    env: 'CG_KAFKA_SSL',
    default: false,
    help: 'TLS towards Kafka (SSL or SASL_SSL listeners)',
    parse: bool,
  }),
  kafkaSslCa: setting({
    env: 'CG_KAFKA_SSL_CA',
    default: null,
    shown: 'system CAs',
    help: "PEM file of the CA(s) that signed the brokers' certificates; setting it turns TLS on",
    parse: optional(pemFile),
  }),
  kafkaSslRejectUnauthorized: setting({
    env: 'CG_KAFKA_SSL_REJECT_UNAUTHORIZED',
    default: true,
    help: 'verify the broker certificate and host name',
    parse: bool,
  }),
  registryUsername: setting({
    env: 'CG_REGISTRY_USERNAME',
    default: null,
    help: 'basic auth towards the schema registry (with CG_REGISTRY_PASSWORD)',
    parse: optional(text),
  }),
  registryPassword: setting({
    env: 'CG_REGISTRY_PASSWORD',
    default: null,
    help: 'basic auth password towards the schema registry',
    parse: optional(text),
    secret: true,
    exact: true,
  }),
  registryCa: setting({
    env: 'CG_REGISTRY_CA',
    default: null,
    shown: 'system CAs',
    help: 'PEM file of the CA(s) for an https registry',
    parse: optional(pemFile),
  }),
  trustedKeysFile: setting({
    env: 'CG_TRUSTED_KEYS_FILE',
    default: null,
    shown: '(none)',
    help:
      'the trusted key ring (contract §4b, JSON of `compaction-guard keys new --ring`): only events signed by its keys ' +
      'write off a loss or answer a spill request; re-read on SIGHUP. Unset: run refuses to start unless ' +
      'CG_ALLOW_UNSIGNED=true (npm start makes a development ring)',
    parse: optional(filePath),
  }),
  allowUnsigned: setting({
    env: 'CG_ALLOW_UNSIGNED',
    default: false,
    help:
      'true: start without CG_TRUSTED_KEYS_FILE, applying unsigned SpillCompleted, SpillFailed and LossAcknowledged ' +
      'from anyone who can write the input topic (logged at warn, gauge compaction_guard_unsigned_allowed)',
    parse: bool,
  }),
} as const;

// ---- the on-call tools and the client library (not `run`) ----------------------------------------

export const TOOL_SETTINGS = {
  signingKeyFile: setting({
    env: 'CG_SIGNING_KEY_FILE',
    flag: 'key',
    default: null,
    shown: "a running npm start's development key, else none",
    help:
      'the signing key (a file of `compaction-guard keys new`) that signs LossAcknowledged, SpillCompleted and ' +
      'SpillFailed (contract §4b): `acknowledge`, `simulate`, GuardClient and SpillWorker',
    parse: optional(filePath),
  }),
  inputMaxMessageBytes: setting({
    env: 'CG_INPUT_MAX_MESSAGE_BYTES',
    flag: 'max-message-bytes',
    default: DEFAULT_MAX_MESSAGE_BYTES,
    shown: `${DEFAULT_MAX_MESSAGE_BYTES}, Kafka's default`,
    help:
      "`audit`: the input topic's max.message.bytes; a longer line is a dead letter (TOO_LONG), " +
      'as no producer could write it as one record, and is never held whole',
    parse: integer(1),
  }),
} as const;

// ---- the embedded local services (env only) ---------------------------------------------------

export const SERVICE_SETTINGS = {
  cacheDir: setting({
    env: 'CG_CACHE_DIR',
    flag: null,
    // src/config/ (or dist/config/ once built): the repository root is two levels up.
    default: resolve(__dirname, '..', '..', '.cache'),
    shown: '.cache/',
    help: 'download cache of the local Kafka and registry (and their logs)',
    parse: (raw) => resolve(raw),
  }),
  kafkaVersion: setting({
    env: 'CG_KAFKA_VERSION',
    flag: null,
    default: '4.4.0',
    help: 'Kafka version of the local broker (from Maven Central)',
    parse: text,
  }),
  kafkaNodes: setting({
    env: 'CG_KAFKA_NODES',
    flag: null,
    default: 1,
    help: 'local Kafka nodes: 1 (the single broker) or a KRaft cluster of up to 5 (RF 3, min ISR 2 at 3)',
    parse: integer(1, 5),
  }),
  registryVersion: setting({
    env: 'CG_REGISTRY_VERSION',
    flag: null,
    default: '3.3.3',
    help: 'Apicurio Registry version of the local registry',
    parse: text,
  }),
  docker: setting({
    env: 'CG_DOCKER',
    flag: null,
    default: true,
    shown: 'probe',
    help: '0: skip the Docker probe (no testcontainers)',
    parse: (raw) => raw !== '0',
  }),
  javaHome: setting({
    env: 'CG_JAVA_HOME',
    flag: null,
    default: null,
    shown: 'JAVA_HOME, PATH, /usr/lib/jvm',
    help: 'the Java runtime for the local services (tried before JAVA_HOME)',
    parse: optional(text),
  }),
  embeddedFile: setting({
    env: 'CG_EMBEDDED_FILE',
    flag: null,
    default: null,
    shown: '.cache/embedded.json in the working directory',
    help: 'where `npm start` announces its embedded services to the on-call commands',
    parse: optional((raw) => resolve(raw)),
  }),
  servicesFile: setting({
    env: 'CG_SERVICES_FILE',
    flag: null,
    default: null,
    shown: '<CG_CACHE_DIR>/services.json',
    help: 'endpoints file of src/services/standalone.ts',
    parse: optional((raw) => resolve(raw)),
  }),
} as const;

// ---- the Claude Code hook and the Agent SDK hooks (env only) ----------------------------------

export const CLAUDE_SPILL_MODES = ['ENABLED', 'DISABLED'] as const;
export const CLAUDE_GUARD_DOWN = ['block', 'allow'] as const;
export const CLAUDE_KEEPABLE_PINS = ['CONSTRAINT', 'PLAN', 'OPEN_TOOL_CALL'] as const;

/** `none`, or a comma list of pins. */
const pinList: Parse<(typeof CLAUDE_KEEPABLE_PINS)[number][]> = (raw, name) => {
  if (raw.toLowerCase() === 'none') return [];
  const pins = raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const p of pins)
    oneOf(CLAUDE_KEEPABLE_PINS, `none or a list of ${CLAUDE_KEEPABLE_PINS.join(', ')}`)(p, name);
  return pins as (typeof CLAUDE_KEEPABLE_PINS)[number][];
};

export const CLAUDE_CODE_SETTINGS = {
  stateDir: setting({
    env: 'CG_CLAUDE_STATE_DIR',
    flag: null,
    default: null,
    shown: '<dirname(transcript_path)>/.compaction-guard',
    help: "the sessions' ledgers, one file per session (src/integrations/claude-code/ledger.ts)",
    parse: optional((raw) => resolve(raw)),
  }),
  spillDir: setting({
    env: 'CG_CLAUDE_SPILL_DIR',
    flag: null,
    default: null,
    shown: '<state dir>/spills',
    help: 'the FileSpillStore directory the transcript turns are spilled to, byte for byte',
    parse: optional((raw) => resolve(raw)),
  }),
  floorTurns: setting({
    env: 'CG_CLAUDE_FLOOR_TURNS',
    flag: null,
    default: 4,
    help: 'the policy floor: the last turns that must stay verbatim or be spilled (0: none)',
    parse: integer(0),
  }),
  windowTokens: setting({
    env: 'CG_CLAUDE_WINDOW_TOKENS',
    flag: null,
    default: 200_000,
    help: "the policy window in tokens (trigger 0.8x, ceiling 1x): the model's context window",
    parse: integer(1),
  }),
  spill: setting({
    env: 'CG_CLAUDE_SPILL',
    flag: null,
    default: 'ENABLED',
    help: 'the policy spill mode: ENABLED (a refusal asks for a spill) or DISABLED (a refusal HALTs)',
    parse: oneOf(CLAUDE_SPILL_MODES),
  }),
  maxBlocks: setting({
    env: 'CG_CLAUDE_MAX_BLOCKS',
    flag: null,
    default: 3,
    help: 'automatic compactions blocked in a row per session before the next one is let through (logged, with a message)',
    parse: integer(0),
  }),
  onGuardDown: setting({
    env: 'CG_CLAUDE_ON_GUARD_DOWN',
    flag: null,
    default: 'block',
    help: 'PreCompact when no verdict comes (broker or processor down, timeout): block or allow',
    parse: oneOf(CLAUDE_GUARD_DOWN),
  }),
  keepPinned: setting({
    env: 'CG_CLAUDE_KEEP_PINNED',
    flag: null,
    default: ['CONSTRAINT', 'PLAN'],
    shown: 'CONSTRAINT,PLAN',
    help: 'the pins whose turns SessionStart (source compact) puts back verbatim; none: off',
    parse: pinList,
  }),
  verdictTimeoutMs: setting({
    env: 'CG_CLAUDE_VERDICT_TIMEOUT_MS',
    flag: null,
    default: 20_000,
    help: "the wait per verdict (ms); Claude Code's hook timeout is 60 s",
    parse: integer(1),
  }),
} as const;
