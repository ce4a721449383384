/**
 * KAFKA_BROKERS and SCHEMA_REGISTRY_URL go together: both set (an external cluster), or both
 * unset (embedded local services). One without the other stops `run` before anything starts.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig, requireRegistry } from '../../src/config/config';

const ROOT = path.resolve(__dirname, '../..');

describe('broker and registry endpoints', () => {
  it('accept both set, or both unset', () => {
    const both = { KAFKA_BROKERS: 'k:9092', SCHEMA_REGISTRY_URL: 'http://r:8081' };
    expect(() => requireRegistry(loadConfig(both))).not.toThrow();
    expect(() => requireRegistry(loadConfig({}))).not.toThrow();
  });

  it('reject brokers without a registry', () => {
    const check = () => requireRegistry(loadConfig({ KAFKA_BROKERS: 'k:9092' }));
    expect(check).toThrow(ConfigError);
    expect(check).toThrow('SCHEMA_REGISTRY_URL (--registry-url): required with KAFKA_BROKERS');
  });

  it.each([
    ['env', { SCHEMA_REGISTRY_URL: 'https://r:8081/secret' }, {}],
    ['flag', {}, { registryUrl: 'https://r:8081/secret' }],
  ])(
    'reject a registry (%s) without brokers instead of replacing it with the embedded one, without echoing the URL',
    (_how, env, flags) => {
      const check = () => requireRegistry(loadConfig(env, flags));
      expect(check).toThrow(ConfigError);
      expect(check).toThrow(
        'SCHEMA_REGISTRY_URL (--registry-url) is set but KAFKA_BROKERS (--brokers) is not',
      );
      expect(check).not.toThrow(/secret/);
    },
  );

  it('`run --registry-url` with no brokers exits 2 with that message and starts nothing', () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
    const started = Date.now();
    const r = spawnSync(
      process.execPath,
      ['bin/compaction-guard.js', 'run', '--registry-url', 'http://localhost:1/apis/ccompat/v7'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 20_000 },
    );
    expect([r.status, r.stderr]).toEqual([
      2,
      'compaction-guard run: invalid configuration: SCHEMA_REGISTRY_URL (--registry-url) is set but KAFKA_BROKERS (--brokers) is not: set KAFKA_BROKERS to the cluster that registry serves, or leave both unset for the embedded local services [CONFIG_INVALID]\n',
    ]);
    // The embedded services take tens of seconds to start: this stopped before them.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
