/**
 * The start-up configuration line a person reads: only the settings that differ from the
 * defaults of the one table (src/config/settings.ts), as the env vars that give them, secrets
 * redacted; the whole configuration at debug.
 */
import { Writable } from 'node:stream';
import { type Config, DEFAULTS, ENV_NAMES, loadConfig } from '../../src/config/config';
import { changedSettings, createLogger, logConfiguration, REDACTED } from '../../src/config/redact';
import { SETTINGS } from '../../src/config/settings';

type Key = keyof Config;

/** A valid value of `key` other than its default, chosen by the default's type alone. */
function otherThanDefault(key: Key): unknown {
  const d: unknown = DEFAULTS[key];
  if (Array.isArray(d)) return ['broker-9:9092'];
  if (typeof d === 'number') return d + 1;
  if (typeof d === 'boolean') return !d;
  if (d === null) return 'set';
  return `${String(d)}-other`;
}

describe('changedSettings: what differs from the table defaults', () => {
  it('the defaults differ in nothing', () => {
    expect(changedSettings(DEFAULTS)).toEqual({});
    expect(changedSettings(loadConfig({}))).toEqual({});
  });

  it('every setting of the table, changed alone, is the one line of the diff, under its env var', () => {
    for (const key of Object.keys(SETTINGS) as Key[]) {
      const c = { ...DEFAULTS, [key]: otherThanDefault(key) } as Config;
      expect(Object.keys(changedSettings(c))).toEqual([ENV_NAMES[key]]);
    }
  });

  it('values read as the env vars that give them, and read back to the same configuration', () => {
    const env = {
      KAFKA_BROKERS: 'b1:9092,b2:9092',
      SCHEMA_REGISTRY_URL: 'https://registry:8081',
      CG_HTTP_PORT: '0',
      CG_COORDINATOR_CACHE: 'false',
      CG_GROUP_ID: 'compaction-guard', // set, but to the default: not a difference
    };
    const c = loadConfig(env);
    const changed = changedSettings(c);
    expect(changed).toEqual({
      KAFKA_BROKERS: 'b1:9092,b2:9092',
      SCHEMA_REGISTRY_URL: 'https://registry:8081',
      CG_HTTP_PORT: '0',
      CG_COORDINATOR_CACHE: 'false',
    });
    expect(loadConfig(changed)).toEqual(c);
  });

  it('brokers equal element by element are no difference, whatever array holds them', () => {
    const brokers = ['b1:9092'];
    expect(
      changedSettings({ ...DEFAULTS, brokers }, { ...DEFAULTS, brokers: ['b1:9092'] }),
    ).toEqual({});
  });

  it('secrets that are set show as set, never their value', () => {
    const c = loadConfig({
      CG_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      CG_KAFKA_SASL_USERNAME: 'svc-guard',
      CG_KAFKA_SASL_PASSWORD: 'kafka-pa55-SECRET',
      CG_HTTP_SESSIONS_TOKEN: 'sessions-token-SECRET',
    });
    expect(changedSettings(c)).toEqual({
      CG_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      CG_KAFKA_SASL_USERNAME: 'svc-guard',
      CG_KAFKA_SASL_PASSWORD: REDACTED,
      CG_HTTP_SESSIONS_TOKEN: REDACTED,
    });
  });

  it('a setting unset where the defaults set it says so', () => {
    const defaults = { ...DEFAULTS, registryUrl: 'https://registry:8081' };
    expect(changedSettings(DEFAULTS, defaults)).toEqual({ SCHEMA_REGISTRY_URL: '(unset)' });
  });
});

describe('logConfiguration', () => {
  function entries(level: string, c: Config): Record<string, unknown>[] {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    logConfiguration(createLogger(level, stream), c);
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it('at info, one line with what differs; the whole configuration only at debug', () => {
    const c = loadConfig({
      CG_HTTP_PORT: '0',
      CG_REGISTRY_PASSWORD: 'x',
      CG_REGISTRY_USERNAME: 'u',
    });
    const info = entries('info', c);
    expect(info).toHaveLength(1);
    expect(info[0]).toMatchObject({
      msg: 'configuration: the defaults, except',
      changed: { CG_HTTP_PORT: '0', CG_REGISTRY_USERNAME: 'u', CG_REGISTRY_PASSWORD: REDACTED },
    });
    expect(info[0]).not.toHaveProperty('config');
    const debug = entries('debug', c);
    expect(debug).toHaveLength(2);
    expect(debug[1]).toMatchObject({ msg: 'configuration', config: { httpPort: 0 } });
    expect(Object.keys(debug[1]!.config as object)).toEqual(Object.keys(SETTINGS));
  });

  it('the defaults alone are one short line, naming where the rest is', () => {
    const info = entries('info', DEFAULTS);
    expect(info).toHaveLength(1);
    expect(info[0]!.msg).toBe('configuration: the defaults (CG_LOG_LEVEL=debug logs all of it)');
  });
});
