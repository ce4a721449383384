/**
 * Where the client and the commands connect (one resolution, src/client/connection.ts): env as
 * for `run`, a command's flags, overrides, else npm start's embedded state file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { embeddedStateFile, readEmbeddedState, resolveConnection } from '../../src/client';
import { connectionOf } from '../../src/client/connection';

describe('client connection settings', () => {
  let dir: string;
  let file: string;
  const state = (pid: number) => ({
    brokers: ['127.0.0.1:19092'],
    registryUrl: 'http://127.0.0.1:18081/apis/ccompat/v7',
    httpUrl: 'http://127.0.0.1:9464',
    pid,
    startedAt: '2026-12-03T12:00:00.000Z',
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-conn-'));
    file = path.join(dir, 'embedded.json');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('with no KAFKA_BROKERS, takes brokers and registry from a live embedded state file (CG_EMBEDDED_FILE)', () => {
    writeFileSync(file, JSON.stringify(state(process.pid)));
    const c = resolveConnection({ CG_EMBEDDED_FILE: file, CG_INPUT_TOPIC: 'mine' });
    expect(c).toMatchObject({
      brokers: ['127.0.0.1:19092'],
      registryUrl: 'http://127.0.0.1:18081/apis/ccompat/v7',
      inputTopic: 'mine',
    });
  });

  it('ignores a state file whose process is gone, and then says what to do', () => {
    writeFileSync(file, JSON.stringify(state(2 ** 22 + 7)));
    expect(readEmbeddedState({ CG_EMBEDDED_FILE: file })).toBeNull();
    expect(() => resolveConnection({ CG_EMBEDDED_FILE: file })).toThrow(
      /no KAFKA_BROKERS and no running `npm start` found/,
    );
  });

  it('KAFKA_BROKERS wins over the state file, and then needs SCHEMA_REGISTRY_URL', () => {
    writeFileSync(file, JSON.stringify(state(process.pid)));
    expect(() => resolveConnection({ CG_EMBEDDED_FILE: file, KAFKA_BROKERS: 'k:9092' })).toThrow(
      /SCHEMA_REGISTRY_URL/,
    );
    expect(
      resolveConnection(
        { KAFKA_BROKERS: 'k:9092', SCHEMA_REGISTRY_URL: 'http://r:8081' },
        { clientId: 'x' },
      ),
    ).toMatchObject({ brokers: ['k:9092'], registryUrl: 'http://r:8081', clientId: 'x' });
  });

  it("a command's flags win over env vars; with no brokers the state file's, a registry set is kept (decision 115)", () => {
    writeFileSync(file, JSON.stringify(state(process.pid)));
    const env = { CG_EMBEDDED_FILE: file, CG_INPUT_TOPIC: 'from-env' };
    const { config, embedded } = connectionOf(env, {
      command: 'tail',
      flags: { inputTopic: 'from-flag', registryUrl: 'http://127.0.0.1:28081' },
    });
    expect(config).toMatchObject({
      brokers: ['127.0.0.1:19092'],
      registryUrl: 'http://127.0.0.1:28081',
      inputTopic: 'from-flag',
    });
    expect(embedded).toMatchObject({ pid: process.pid });
  });

  it('names the command when nothing can be reached; a registry is optional only when asked', () => {
    expect(() => connectionOf({ CG_EMBEDDED_FILE: file }, { command: 'simulate' })).toThrow(
      /^compaction-guard simulate: no KAFKA_BROKERS and no running `npm start` found/,
    );
    expect(() => connectionOf({ KAFKA_BROKERS: 'k:9092' }, { command: 'tail' })).toThrow(
      /SCHEMA_REGISTRY_URL \(--registry-url\): required with KAFKA_BROKERS/,
    );
    expect(
      connectionOf({ KAFKA_BROKERS: 'k:9092' }, { command: 'simulate', registry: 'optional' })
        .config.registryUrl,
    ).toBeNull();
  });

  it('the default state file is .cache/embedded.json under the working directory', () => {
    expect(embeddedStateFile({})).toBe(path.resolve('.cache', 'embedded.json'));
  });
});
