/**
 * Secrets stay out of logs: the one logger factory (`createLogger`) censors password, token and
 * authorization fields wherever the usual shapes put them, and `redactConfig` is the only form
 * of a Config that is ever logged.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { type Config, SECRET_KEYS } from './config';
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
