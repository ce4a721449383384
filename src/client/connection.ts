/**
 * Where the client and the commands (`tail`, `acknowledge`, `simulate`) connect, resolved in
 * one place: the same settings as `compaction-guard run` (env vars, then the command's flags,
 * then the caller's overrides; SASL/TLS and registry auth included), and, when no brokers are
 * given, the embedded services of a running `npm start` (its state file, which must be this
 * user's own and name only loopback endpoints: src/services/embedded.ts).
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

export interface ConnectionRequest {
  /** Who asks, for the message when nothing can be reached: a command's name, or `client`. */
  command?: string;
  /** A command's flags, read as `run` reads its own (they win over env vars). */
  flags?: Record<string, string | undefined>;
  /** Settings given in code, on top of env vars and flags (the client's `config`). */
  overrides?: Partial<Config>;
  /** `optional`: no registry is needed (`simulate --format json`); default required. */
  registry?: 'required' | 'optional';
}

/**
 * The effective settings: `loadConfig(env)` (as `run`), then `overrides`; no brokers → the
 * embedded state file. Throws ConfigError naming what to set when nothing can be reached.
 */
export function resolveConnection(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): Config {
  return connectionOf(env, { overrides }).config;
}

/**
 * `resolveConnection`, also saying whether the brokers are a running `npm start`'s. With no
 * brokers, the state file's brokers, and its registry unless one is set (a setting given is
 * honoured).
 */
export function connectionOf(
  env: NodeJS.ProcessEnv = process.env,
  request: ConnectionRequest = {},
): ResolvedConnection {
  const config: Config = { ...loadConfig(env, request.flags), ...request.overrides };
  let embedded: EmbeddedState | null = null;
  if (config.brokers.length === 0) {
    embedded = readEmbeddedState(env);
    if (embedded === null)
      throw new ConfigError(noEmbeddedMessage(request.command ?? 'client', env));
    config.brokers = embedded.brokers;
    config.registryUrl ??= embedded.registryUrl;
  }
  if (config.registryUrl === null && request.registry !== 'optional') {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (events and outputs are Avro through the registry)',
    );
  }
  refuseUnsafeConfig(config);
  return { config, embedded };
}
