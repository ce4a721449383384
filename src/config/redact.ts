/**
 * Secrets stay out of logs: the one logger factory (`createLogger`) censors password, token and
 * authorization fields wherever the usual shapes put them, and a Config is only ever logged
 * through `redactConfig` (whole, at debug) or `changedSettings` (what differs from the defaults,
 * the start-up line a person reads): `logConfiguration` writes both.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { type Config, configEnv, DEFAULTS, ENV_NAMES, SECRET_KEYS } from './config';
import type { LogFormat } from './settings';

export const REDACTED = '[REDACTED]';

const SECRET_FIELDS = [
  'password',
  'token',
  'authorization',
  'Authorization',
  'kafkaSaslPassword',
  'registryPassword',
  'httpSessionsToken',
];

/** pino redact paths: each secret field at the top level and up to two levels deep. */
export const REDACT_PATHS: string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((f) => `*.${f}`),
  ...SECRET_FIELDS.map((f) => `*.*.${f}`),
];

/**
 * The logger of `run` and `simulate`, secrets censored: JSON lines for machines (a pipe, a file,
 * a log shipper), readable lines for a person at a terminal (`CG_LOG_FORMAT`, default auto).
 * pino-pretty runs in this thread (no worker transport), so a line is written before the
 * process exits.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  format: LogFormat = 'auto',
): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: REDACTED } };
  if (destination) return pino(options, destination);
  const readable = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  if (!readable) return pino(options);
  return pino(
    options,
    pretty({
      sync: true,
      colorize: process.stdout.isTTY === true,
      ignore: 'pid,hostname',
      translateTime: 'SYS:HH:MM:ss.l',
      // One line per entry: a person reads the stream as it scrolls.
      singleLine: true,
    }),
  );
}

/** A copy of the config that is safe to log or show: secrets set are replaced, unset stay null. */
export function redactConfig(c: Config): Record<keyof Config, unknown> {
  const out: Record<string, unknown> = { ...c };
  for (const k of SECRET_KEYS) if (out[k] !== null && out[k] !== undefined) out[k] = REDACTED;
  return out as Record<keyof Config, unknown>;
}

/** Arrays (the brokers) compare element by element; every other setting is a scalar or null. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  return Object.is(a, b);
}

/**
 * The settings of `c` that differ from the table's defaults, as the env vars a person would
 * export to get them (`{ CG_HTTP_PORT: '0' }`), secrets redacted: short enough for the one
 * start-up line a person reads; the whole config is logged at debug.
 */
export function changedSettings(
  c: Config,
  defaults: Readonly<Config> = DEFAULTS,
): Record<string, string> {
  const keys = (Object.keys(defaults) as (keyof Config)[]).filter(
    (k) => !sameValue(c[k], defaults[k]),
  );
  const changed = configEnv(redactConfig(c) as Config, keys);
  // configEnv leaves unset settings out; one unset here was set by default, and that is news.
  for (const k of keys) if (c[k] === null) changed[ENV_NAMES[k]] = '(unset)';
  return changed;
}

/** `run`'s configuration lines: what differs from the defaults at info, all of it at debug. */
export function logConfiguration(log: Logger, c: Config): void {
  const changed = changedSettings(c);
  if (Object.keys(changed).length === 0)
    log.info('configuration: the defaults (CG_LOG_LEVEL=debug logs all of it)');
  else log.info({ changed }, 'configuration: the defaults, except');
  log.debug({ config: redactConfig(c) }, 'configuration');
}
