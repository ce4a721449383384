/**
 * Where the client connects: the same settings as `compaction-guard run` (env vars, then the
 * caller's overrides; SASL/TLS and registry auth included), and, when no brokers are given, the
 * embedded services of a running `npm start` (its state file, src/services/embedded.ts).
 */
import { type Config, ConfigError, loadConfig, refuseUnsafeConfig } from '../config/config';
import {
  type EmbeddedState,
  embeddedStatePath,
  noEmbeddedMessage,
  readEmbeddedState,
} from '../services/embedded';

export type { EmbeddedState };
export { readEmbeddedState };
/** The state file's path: CG_EMBEDDED_FILE, else `.cache/embedded.json` under the working directory. */
export const embeddedStateFile = embeddedStatePath;

/** The settings, and the running `npm start` they came from (null: brokers were given). */
export interface ResolvedConnection {
  config: Config;
  embedded: EmbeddedState | null;
}

/**
 * The effective settings: `loadConfig(env)` (as `run`), then `overrides`; no brokers → the
 * embedded state file. Throws ConfigError naming what to set when nothing can be reached.
 */
export function resolveConnection(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): Config {
  return connectionOf(env, overrides).config;
}

/** `resolveConnection`, also saying whether the brokers are a running `npm start`'s. */
export function connectionOf(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): ResolvedConnection {
  const config: Config = { ...loadConfig(env), ...overrides };
  let embedded: EmbeddedState | null = null;
  if (config.brokers.length === 0) {
    embedded = readEmbeddedState(env);
    if (embedded === null) throw new ConfigError(noEmbeddedMessage('client', env));
    config.brokers = embedded.brokers;
    config.registryUrl ??= embedded.registryUrl;
  }
  if (config.registryUrl === null) {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (verdicts are Avro through the registry)',
    );
  }
  refuseUnsafeConfig(config);
  return { config, embedded };
}
