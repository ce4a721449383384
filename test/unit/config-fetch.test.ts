/** The input fetch sizes: defaults, env and flag, validation (docs/decisions.md 27, 28). */
import { ConfigError, DEFAULTS, loadConfig } from '../../src/config/config';

describe('fetch sizes', () => {
  it('default to 8 MiB per partition and 48 MiB per fetch', () => {
    const c = loadConfig({});
    expect(c.maxBytesPerPartition).toBe(8 * 1024 * 1024);
    expect(c.fetchMaxBytes).toBe(48 * 1024 * 1024);
    expect(c.fetchMaxBytes).toBe(DEFAULTS.fetchMaxBytes);
  });

  it('are read from CG_FETCH_MAX_BYTES / CG_MAX_BYTES_PER_PARTITION; the flag wins', () => {
    const env = { CG_FETCH_MAX_BYTES: '10485760', CG_MAX_BYTES_PER_PARTITION: '1048576' };
    const fromEnv = loadConfig(env);
    expect(fromEnv.fetchMaxBytes).toBe(10_485_760);
    expect(fromEnv.maxBytesPerPartition).toBe(1_048_576);
    expect(loadConfig(env, { fetchMaxBytes: '2097152' }).fetchMaxBytes).toBe(2_097_152);
  });

  it.each(['0', '-1', '1.5', 'lots'])('reject %s, naming the setting and the value', (raw) => {
    const load = () => loadConfig({ CG_FETCH_MAX_BYTES: raw });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      `CG_FETCH_MAX_BYTES (--fetch-max-bytes): expected an integer ≥ 1, got ${JSON.stringify(raw)}`,
    );
  });
});
