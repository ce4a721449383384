/**
 * How the on-call commands (`tail`, `inspect`, `acknowledge`) find the cluster and the
 * processor: the same settings as `run` (env vars, flags win), and with no KAFKA_BROKERS the
 * state file a running `npm start` wrote (resolved as the client resolves it,
 * src/client/connection.ts).
 */
import type { Command } from 'commander';
import pino, { type Logger } from 'pino';
import { type Config, ENV_NAMES, ConfigError, loadConfig, optionHelp } from '../config/config';
import { REDACT_PATHS, REDACTED } from '../config/redact';
import { type ResolvedConnection, connectionOf } from '../client/connection';
import { readEmbeddedState } from '../services/embedded';

/** The settings of `run` that say where Kafka, the registry and the processor are, and how to log in. */
const CONNECTION_KEYS: readonly (keyof Config)[] = [
  'brokers',
  'registryUrl',
  'clientId',
  'kafkaClient',
  'inputTopic',
  'verdictTopic',
  'spillTopic',
  'auditTopic',
  'dlqTopic',
  'kafkaSaslMechanism',
  'kafkaSaslUsername',
  'kafkaSaslPassword',
  'kafkaSsl',
  'kafkaSslCa',
  'kafkaSslRejectUnauthorized',
  'registryUsername',
  'registryPassword',
  'registryCa',
  'httpHost',
  'httpPort',
  'httpSessionsToken',
  'logLevel',
];

/** Adds `--brokers`, `--registry-url`, ... as on `run` (same names, same env vars). */
export function addConnectionOptions(cmd: Command): Command {
  for (const key of CONNECTION_KEYS) {
    const shown =
      key === 'brokers' || key === 'registryUrl'
        ? 'a running `npm start`'
        : key === 'logLevel'
          ? 'error, to stderr'
          : undefined;
    const { flags, description } = optionHelp(key, shown);
    cmd.option(flags, description);
  }
  return cmd;
}

/** Kafka settings; with no brokers, those of the running embedded processor, else a clear error. */
export function kafkaConnection(
  command: string,
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedConnection {
  return connectionOf(env, { command, flags });
}

/**
 * The processor's HTTP base URL: `--url`; else CG_HTTP_HOST / CG_HTTP_PORT when one is set;
 * else a running `npm start`'s; else `run`'s defaults. A wildcard bind address is reached on
 * the loopback.
 */
export function processorUrl(
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (flags.url !== undefined) {
    if (!/^https?:\/\/\S+$/.test(flags.url))
      throw new ConfigError(`--url: expected an http(s) URL, got ${JSON.stringify(flags.url)}`);
    return flags.url.replace(/\/+$/, '');
  }
  const config = loadConfig(env, flags);
  const explicit = [
    flags.httpHost,
    flags.httpPort,
    env[ENV_NAMES.httpHost],
    env[ENV_NAMES.httpPort],
  ].some((v) => v !== undefined && v.trim() !== '');
  if (!explicit) {
    const embedded = readEmbeddedState(env);
    if (embedded !== null) return embedded.httpUrl;
  }
  return httpUrlOf(config.httpHost, config.httpPort);
}

export function httpUrlOf(host: string, port: number): string {
  const reach = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}`;
}

/**
 * Logs of a tool go to stderr (stdout is its output, e.g. `tail --json`), at `error` unless
 * CG_LOG_LEVEL / --log-level says otherwise (kafkajs warns about its partitioner and idempotent
 * retries on every producer: noise to a person at a terminal); secrets censored as in `run`.
 */
export function toolLogger(flags: Record<string, string | undefined>, env = process.env): Logger {
  const level = flags.logLevel ?? env[ENV_NAMES.logLevel] ?? 'error';
  return pino({ level, redact: { paths: REDACT_PATHS, censor: REDACTED } }, pino.destination(2));
}
