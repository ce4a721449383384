/**
 * Processor configuration, derived from the one table of settings (src/config/settings.ts):
 * the `Config` type, the defaults, the env names, the parsing (flags win over env vars, env vars
 * over defaults) and the `--help` lines. Validated once at start-up: a bad value fails start-up
 * with the variable's name and what was expected.
 */
import { readFileSync } from 'node:fs';
import {
  ConfigError,
  hasUrlCredentials,
  INPUT_FORMATS,
  SASL_MECHANISMS,
  SERVICE_SETTINGS,
  CLAUDE_CODE_SETTINGS,
  SETTINGS,
  TOOL_SETTINGS,
  type Setting,
  urlCredentialsRefused,
} from './settings';

export { ConfigError } from './settings';

type ValueOf<S> = S extends Setting<infer T> ? T : never;
type Values<Table> = { -readonly [K in keyof Table]: ValueOf<Table[K]> };

/** Everything `compaction-guard run` is configured by (see SETTINGS for each one's meaning). */
export type Config = Values<typeof SETTINGS>;
/** The embedded local services' settings (env only). */
export type ServiceSettings = Values<typeof SERVICE_SETTINGS>;
export type ClaudeCodeSettings = Values<typeof CLAUDE_CODE_SETTINGS>;
/** The on-call tools' and the client library's own settings. */
export type ToolSettings = Values<typeof TOOL_SETTINGS>;
export type InputFormat = (typeof INPUT_FORMATS)[number];
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

type Key = keyof Config;
const KEYS = Object.keys(SETTINGS) as Key[];
const entry = (key: Key): Setting<unknown> => SETTINGS[key] as Setting<unknown>;

function fromTable<V>(f: (s: Setting<unknown>, key: Key) => V): Record<Key, V> {
  return Object.fromEntries(KEYS.map((k) => [k, f(entry(k), k)])) as Record<Key, V>;
}

export const DEFAULTS: Readonly<Config> = fromTable((s) => s.default) as Config;

/** Env var for each setting. */
export const ENV_NAMES: Readonly<Record<Key, string>> = fromTable((s) => s.env);

/** Settings that are secrets: never logged, and also readable from a file via `<ENV>_FILE`. */
export const SECRET_KEYS: readonly Key[] = KEYS.filter((k) => entry(k).secret === true);

export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The flag of a setting, e.g. `--group-id`. */
export function flagOf(key: Key): string {
  return `--${entry(key).flag ?? kebab(key)}`;
}

/** How messages name a setting: `CG_GROUP_ID (--group-id)`. */
function flagName(key: Key): string {
  return `${ENV_NAMES[key]} (${flagOf(key)})`;
}

/** A commander option line for a setting (the same text on `run` and the on-call commands). */
export function optionHelp(
  key: Key,
  shownDefault?: string,
): { flags: string; description: string } {
  return settingHelp(entry(key), flagOf(key), shownDefault);
}

/** The option line of a tool setting (TOOL_SETTINGS), e.g. `--key <value>`. */
export function toolOptionHelp(key: keyof ToolSettings): { flags: string; description: string } {
  const s = TOOL_SETTINGS[key] as Setting<unknown>;
  return settingHelp(s, `--${s.flag ?? kebab(key)}`);
}

function settingHelp(
  s: Setting<unknown>,
  flag: string,
  shownDefault?: string,
): { flags: string; description: string } {
  const d = s.default;
  const shown =
    shownDefault ??
    s.shown ??
    (Array.isArray(d) ? d.join(',') : d === null ? '(unset)' : String(d));
  const env = s.secret ? `env ${s.env} or ${s.env}_FILE` : `env ${s.env}`;
  return { flags: `${flag} <value>`, description: `${s.help}; ${env} (default: ${shown})` };
}

/** `<ENV>_FILE` for a secret: the file's content without the trailing newline. */
function secretFromFile(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const path = env[`${name}_FILE`];
  if (path === undefined || path.trim() === '') return undefined;
  try {
    return readFileSync(path.trim(), 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    throw new ConfigError(
      `${name}_FILE: cannot read ${JSON.stringify(path.trim())}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

type Source = Partial<Record<string, string | undefined>>;

/** The raw value of one setting (flag, env var, `_FILE`), trimmed unless exact; undefined: unset. */
function rawValue(s: Setting<unknown>, env: NodeJS.ProcessEnv, flag: string | undefined) {
  const v = flag ?? env[s.env] ?? (s.secret ? secretFromFile(env, s.env) : undefined);
  if (v === undefined || v.trim() === '') return undefined;
  return s.exact ? v : v.trim();
}

/** Flags win over env vars, env vars over defaults. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: Source = {}): Config {
  const raw: Source = {};
  const c = { ...DEFAULTS } as Record<Key, unknown>;
  for (const key of KEYS) {
    const v = rawValue(entry(key), env, flags[key]);
    if (v === undefined) continue;
    raw[key] = v;
    c[key] = entry(key).parse(v, flagName(key));
  }
  validateSecurity(c as Config, raw);
  const { replicationFactor: rf, minInsyncReplicas: isr } = c as Config;
  if (rf !== null && isr !== null && isr > rf)
    throw new ConfigError(
      `${ENV_NAMES.minInsyncReplicas} (--min-insync-replicas)=${isr} is more than ${ENV_NAMES.replicationFactor} (--replication-factor)=${rf}: no write to such a topic could ever succeed`,
    );
  return c as Config;
}

/** The settings that name the topics of contract §6. */
export const TOPIC_KEYS = [
  'inputTopic',
  'verdictTopic',
  'spillTopic',
  'auditTopic',
  'dlqTopic',
  'changelogTopic',
] as const satisfies readonly Key[];

/**
 * The env vars that give `keys` of `c` (what a person would export; loadConfig reads them back
 * to the same values). An unset (null) setting is left out.
 */
export function configEnv(c: Config, keys: readonly Key[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of keys) {
    const v = c[key];
    if (v !== null) env[ENV_NAMES[key]] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return env;
}

/** The tools' settings: a flag (commander's camelCase key) wins over the env var. */
export function toolSettings(env: NodeJS.ProcessEnv, flags: Source = {}): ToolSettings {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(TOOL_SETTINGS) as [string, Setting<unknown>][]) {
    const flag = s.flag ?? kebab(key);
    const v = rawValue(s, env, flags[flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())]);
    out[key] = v === undefined ? s.default : s.parse(v, `${s.env} (--${flag})`);
  }
  return out as ToolSettings;
}

/** The embedded local services' settings, from env vars. */
export function serviceSettings(env: NodeJS.ProcessEnv = process.env): ServiceSettings {
  return envSettings(SERVICE_SETTINGS, env) as ServiceSettings;
}

/** The Claude Code hook's settings (and the Agent SDK hooks' defaults), from env vars. */
export function claudeCodeSettings(env: NodeJS.ProcessEnv = process.env): ClaudeCodeSettings {
  return envSettings(CLAUDE_CODE_SETTINGS, env) as ClaudeCodeSettings;
}

/** An env-only table's values: each set variable parsed, the others at their defaults. */
function envSettings(table: Record<string, Setting<unknown>>, env: NodeJS.ProcessEnv): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(table)) {
    const v = rawValue(s, env, undefined);
    out[key] = v === undefined ? s.default : s.parse(v, s.env);
  }
  return out;
}

/** Combinations that cannot work are start-up errors, not surprises at the first connection. */
function validateSecurity(c: Config, raw: Source): void {
  if (c.kafkaSaslMechanism !== 'none') {
    const missing = (['kafkaSaslUsername', 'kafkaSaslPassword'] as const).filter(
      (k) => c[k] === null,
    );
    if (missing.length > 0) {
      throw new ConfigError(
        `${flagName('kafkaSaslMechanism')}=${c.kafkaSaslMechanism} needs ${missing.map((k) => `${ENV_NAMES[k]}${k === 'kafkaSaslPassword' ? ' (or _FILE)' : ''}`).join(' and ')}`,
      );
    }
  } else if (c.kafkaSaslUsername !== null || c.kafkaSaslPassword !== null) {
    throw new ConfigError(
      `${flagName('kafkaSaslUsername')} / CG_KAFKA_SASL_PASSWORD are set but ${flagName('kafkaSaslMechanism')} is none: set the mechanism (plain, scram-sha-256 or scram-sha-512)`,
    );
  }
  if (c.kafkaSslCa !== null) {
    // A CA file only makes sense with TLS: it turns TLS on unless TLS was explicitly switched off.
    if (raw.kafkaSsl === 'false')
      throw new ConfigError(
        `${flagName('kafkaSslCa')} is set but ${flagName('kafkaSsl')} is false`,
      );
    c.kafkaSsl = true;
  }
  if ((c.registryUsername === null) !== (c.registryPassword === null)) {
    throw new ConfigError(
      `registry basic auth needs both ${ENV_NAMES.registryUsername} and ${ENV_NAMES.registryPassword} (or _FILE)`,
    );
  }
  if (c.registryCa !== null && c.registryUrl !== null && !c.registryUrl.startsWith('https://')) {
    throw new ConfigError(
      `${flagName('registryCa')} is set but ${flagName('registryUrl')} is not https: ${c.registryUrl}`,
    );
  }
  refusePlaintextAuth(c);
}

/**
 * Passwords that would cross the network in clear are refused unless CG_ALLOW_PLAINTEXT_AUTH
 * says so: SASL PLAIN without TLS, and registry basic auth over http://. (SCRAM never sends the
 * password itself, so it is allowed without TLS.)
 */
function refusePlaintextAuth(c: Config): void {
  if (c.allowPlaintextAuth) return;
  const allow = `or set ${flagName('allowPlaintextAuth')}=true to accept that`;
  if (c.kafkaSaslMechanism === 'plain' && !c.kafkaSsl)
    throw new ConfigError(
      `${flagName('kafkaSaslMechanism')}=plain without TLS sends the Kafka password in clear: ` +
        `set ${ENV_NAMES.kafkaSsl}=true (or ${ENV_NAMES.kafkaSslCa}), use scram-sha-512, ${allow}`,
    );
  if (c.registryUsername !== null && c.registryUrl?.startsWith('http://') === true)
    throw new ConfigError(
      `registry basic auth (${ENV_NAMES.registryUsername}) over http:// sends the registry password in clear: ` +
        `use an https:// ${ENV_NAMES.registryUrl}, ${allow}`,
    );
}

/**
 * The checks of loadConfig that a Config assembled in code (the client's overrides) must pass
 * too: no credentials in the registry URL, no password in clear.
 */
export function refuseUnsafeConfig(c: Config): void {
  if (c.registryUrl !== null && hasUrlCredentials(c.registryUrl))
    throw urlCredentialsRefused(flagName('registryUrl'));
  refusePlaintextAuth(c);
}

/** 127.0.0.0/8, ::1 and `localhost`: only this machine can connect. Anything else is not. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return (
    h === 'localhost' ||
    h === '::1' ||
    h === '0:0:0:0:0:0:0:1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  );
}

/**
 * `run` only (the on-call commands read CG_HTTP_HOST as where the processor is): serving
 * /sessions/{id} beyond this machine without a token hands every session's state to anyone who
 * can reach the port.
 */
export function requireSafeHttp(c: Config): void {
  if (c.httpSessions && c.httpSessionsToken === null && !isLoopbackHost(c.httpHost))
    throw new ConfigError(
      `${flagName('httpHost')}=${c.httpHost} is not a loopback address and /sessions is served without a token: ` +
        `set ${ENV_NAMES.httpSessionsToken} (or _FILE), or ${ENV_NAMES.httpSessions}=false, or bind ${ENV_NAMES.httpHost}=127.0.0.1`,
    );
}

/**
 * The processor writes Avro: with an external cluster it needs that cluster's registry. Without
 * brokers it starts embedded services with their own registry, so a registry URL given alone
 * would be silently replaced: more likely a forgotten KAFKA_BROKERS than a wish for the
 * embedded services, so it stops start-up instead (fail closed).
 */
export function requireRegistry(c: Config): void {
  if (c.registryUrl === null && c.brokers.length > 0) {
    throw new ConfigError(
      'SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS (outputs are Avro); leave both unset for the embedded local services',
    );
  }
  if (c.registryUrl !== null && c.brokers.length === 0) {
    throw new ConfigError(
      // The URL is not echoed (credentials in it are refused when it is parsed, but a path may be private).
      `${flagName('registryUrl')} is set but ${flagName('brokers')} is not: set KAFKA_BROKERS to the cluster that registry serves, or leave both unset for the embedded local services`,
    );
  }
}
