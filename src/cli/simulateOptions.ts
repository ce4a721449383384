/**
 * `simulate`'s options, checked like `run`'s settings: a bad value stops the command with the
 * flag's name and what was expected (never a silent default, NaN or a rejected 0).
 */
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../config/config';
import type { SimulateOptions } from './simulate';

export type RawSimulateOptions = Record<string, string | boolean | undefined>;

function text(opts: RawSimulateOptions, key: string): string {
  const v = opts[key];
  return typeof v === 'string' ? v : String(v);
}

function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function integer(
  opts: RawSimulateOptions,
  key: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = text(opts, key);
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(
      `${flagName(key)}: expected an integer from ${min} to ${max}, got ${JSON.stringify(opts[key])}`,
    );
  return n;
}

function positive(opts: RawSimulateOptions, key: string): number {
  const raw = text(opts, key);
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new ConfigError(
      `${flagName(key)}: expected a positive number, got ${JSON.stringify(opts[key])}`,
    );
  return n;
}

function share(opts: RawSimulateOptions, key: string): number {
  const raw = text(opts, key);
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new ConfigError(
      `${flagName(key)}: expected a number from 0 to 1, got ${JSON.stringify(opts[key])}`,
    );
  return n;
}

const SESSION_PREFIX = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * A prefix no earlier run used: two runs with the same seed would otherwise reuse session ids,
 * and the processor rightly reports the second run's events as SEQ_CONFLICTs and halts.
 */
export function freshSessionPrefix(now = Date.now(), random = randomBytes(3)): string {
  return `sim-${now.toString(36)}${random.toString('hex')}`;
}

export function parseSimulateOptions(opts: RawSimulateOptions): SimulateOptions {
  const format = text(opts, 'format');
  if (format !== 'avro' && format !== 'json')
    throw new ConfigError(`--format: expected avro or json, got ${JSON.stringify(opts.format)}`);
  const prefix =
    opts.sessionPrefix === undefined ? freshSessionPrefix() : text(opts, 'sessionPrefix');
  if (!SESSION_PREFIX.test(prefix))
    throw new ConfigError(
      `--session-prefix: expected 1 to 64 letters, digits or . _ : -, got ${JSON.stringify(opts.sessionPrefix)}`,
    );
  return {
    sessions: integer(opts, 'sessions', 1),
    events: integer(opts, 'events', 1),
    // The PRNG keeps 32 bits of state: larger seeds would repeat smaller ones.
    seed: integer(opts, 'seed', 0, 0xffff_ffff),
    rate: positive(opts, 'rate'),
    faultyShare: share(opts, 'faultyShare'),
    spillAck: opts.spillAck !== false,
    format,
    sessionPrefix: prefix,
    replay: opts.replay === true,
  };
}
