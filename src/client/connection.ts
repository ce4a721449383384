/**
 * Where the client connects: the same settings as `compaction-guard run` (env vars, then the
 * caller's overrides; SASL/TLS and registry auth included), and, when no brokers are given, the
 * embedded services that a local `npm start` wrote to its state file.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { type Config, ConfigError, loadConfig } from '../config/config';

/** What `npm start` records about its embedded Kafka and registry. */
export interface EmbeddedState {
  brokers: string[];
  registryUrl: string;
  httpUrl: string;
  pid: number;
  startedAt: string;
}

/** The state file's path: CG_EMBEDDED_FILE, else `.cache/embedded.json` under the working directory. */
export function embeddedStateFile(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.CG_EMBEDDED_FILE?.trim();
  return path.resolve(explicit ? explicit : path.join('.cache', 'embedded.json'));
}

/** The running embedded services, or null when there is no state file or its process is gone. */
export function readEmbeddedState(env: NodeJS.ProcessEnv = process.env): EmbeddedState | null {
  const file = embeddedStateFile(env);
  if (!existsSync(file)) return null;
  let state: EmbeddedState;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as EmbeddedState;
  } catch {
    return null;
  }
  if (!Array.isArray(state.brokers) || typeof state.registryUrl !== 'string') return null;
  try {
    process.kill(state.pid, 0);
  } catch (e) {
    // EPERM: alive but someone else's; ESRCH: gone, the file is stale.
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return null;
  }
  return state;
}

/**
 * The effective settings: `loadConfig(env)` (as `run`), then `overrides`; no brokers → the
 * embedded state file. Throws ConfigError naming what to set when nothing can be reached.
 */
export function resolveConnection(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): Config {
  const config: Config = { ...loadConfig(env), ...overrides };
  if (config.brokers.length === 0) {
    const embedded = readEmbeddedState(env);
    if (embedded === null) {
      throw new ConfigError(
        `KAFKA_BROKERS is not set and no embedded processor is running (no live state file at ${embeddedStateFile(env)}): ` +
          'start one with `npm start`, or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL',
      );
    }
    config.brokers = embedded.brokers;
    config.registryUrl ??= embedded.registryUrl;
  }
  if (config.registryUrl === null) {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (verdicts are Avro through the registry)',
    );
  }
  return config;
}
