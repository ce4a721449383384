/**
 * Secrets stay out of logs: the one logger factory (`createLogger`) censors password, token and
 * authorization fields wherever the usual shapes put them, and `redactConfig` is the only form
 * of a Config that is ever logged.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { type Config, SECRET_KEYS } from './config';

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

/** The logger of `run` and `simulate`: JSON lines, secrets censored. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: REDACTED } };
  return destination ? pino(options, destination) : pino(options);
}

/** A copy of the config that is safe to log or show: secrets set are replaced, unset stay null. */
export function redactConfig(c: Config): Record<keyof Config, unknown> {
  const out: Record<string, unknown> = { ...c };
  for (const k of SECRET_KEYS) if (out[k] !== null && out[k] !== undefined) out[k] = REDACTED;
  return out as Record<keyof Config, unknown>;
}
