/**
 * The configuration refusals as a person meets them: `compaction-guard run` (and the on-call
 * commands for the embedded state file) exit with status 2 and one line on stderr, before
 * anything is started or sent. Runs the built CLI (`npm run build`, as `npm test` does first).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeEmbeddedState } from '../../src/services/embedded';

const ROOT = path.resolve(__dirname, '../..');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cg-refusals-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI with only `env` (and PATH/HOME), no embedded state unless given. */
function cli(args: string[], env: Record<string, string>) {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['bin/compaction-guard.js', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CG_EMBEDDED_FILE: path.join(dir, 'none.json'),
      ...env,
    },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stderr: r.stderr, ms: Date.now() - started };
}

const EXTERNAL = { KAFKA_BROKERS: '127.0.0.1:1', SCHEMA_REGISTRY_URL: 'https://127.0.0.1:2' };

describe('configuration refusals of `run`: exit 2, one line, nothing started', () => {
  it.each<[string, Record<string, string>, string]>([
    [
      'a non-loopback HTTP bind with /sessions on and no token',
      { CG_HTTP_HOST: '0.0.0.0' },
      'CG_HTTP_HOST (--http-host)=0.0.0.0 is not a loopback address and /sessions is served without a token: set CG_HTTP_SESSIONS_TOKEN (or _FILE), or CG_HTTP_SESSIONS=false, or bind CG_HTTP_HOST=127.0.0.1',
    ],
    [
      'credentials in SCHEMA_REGISTRY_URL',
      { ...EXTERNAL, SCHEMA_REGISTRY_URL: 'https://reg-user:reg-pa55@registry:8081' },
      'SCHEMA_REGISTRY_URL (--registry-url): credentials in the URL are refused (the URL is logged and shown in errors); give them as CG_REGISTRY_USERNAME and CG_REGISTRY_PASSWORD (or CG_REGISTRY_PASSWORD_FILE)',
    ],
    [
      'SASL PLAIN without TLS',
      {
        ...EXTERNAL,
        CG_KAFKA_SASL_MECHANISM: 'plain',
        CG_KAFKA_SASL_USERNAME: 'svc',
        CG_KAFKA_SASL_PASSWORD: 'kafka-pa55',
      },
      'CG_KAFKA_SASL_MECHANISM (--kafka-sasl-mechanism)=plain without TLS sends the Kafka password in clear: set CG_KAFKA_SSL=true (or CG_KAFKA_SSL_CA), use scram-sha-512, or set CG_ALLOW_PLAINTEXT_AUTH (--allow-plaintext-auth)=true to accept that',
    ],
    [
      'registry basic auth over http://',
      {
        ...EXTERNAL,
        SCHEMA_REGISTRY_URL: 'http://registry:8081',
        CG_REGISTRY_USERNAME: 'reg-user',
        CG_REGISTRY_PASSWORD: 'reg-pa55',
      },
      'registry basic auth (CG_REGISTRY_USERNAME) over http:// sends the registry password in clear: use an https:// SCHEMA_REGISTRY_URL, or set CG_ALLOW_PLAINTEXT_AUTH (--allow-plaintext-auth)=true to accept that',
    ],
  ])('%s', (_what, env, message) => {
    const r = cli(['run'], env);
    expect([r.status, r.stderr]).toEqual([
      2,
      `compaction-guard run: invalid configuration: ${message} [CONFIG_INVALID]\n`,
    ]);
    for (const secret of ['reg-pa55', 'kafka-pa55']) expect(r.stderr).not.toContain(secret);
    // The embedded services take tens of seconds to start, a broker connection 8 s to give up.
    expect(r.ms).toBeLessThan(8_000);
  });
});

describe('the on-call commands refuse an embedded state file they cannot trust: exit 2, one line', () => {
  const state = {
    brokers: ['127.0.0.1:9092'],
    registryUrl: 'http://127.0.0.1:8080/apis/ccompat/v7',
    httpUrl: 'http://127.0.0.1:9464',
    pid: process.pid, // alive while the test runs
    startedAt: '2026-01-01T00:00:00.000Z',
  };

  it('a world-writable file', () => {
    const file = path.join(dir, 'writable.json');
    writeEmbeddedState(state, { CG_EMBEDDED_FILE: file });
    chmodSync(file, 0o666);
    const r = cli(['inspect', 'some-session'], { CG_EMBEDDED_FILE: file });
    expect([r.status, r.stderr]).toEqual([
      2,
      `compaction-guard inspect: ${file} is not trusted: it is group- or world-writable (mode 0666). It tells the on-call commands where to send credentials; remove it (a running \`npm start\` writes it again, mode 0600) or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL\n`,
    ]);
  });

  it('a file that would send the sessions token to another host', () => {
    const file = path.join(dir, 'remote.json');
    writeEmbeddedState(
      { ...state, httpUrl: 'http://collector.example:80' },
      { CG_EMBEDDED_FILE: file },
    );
    const r = cli(['inspect', 'some-session'], {
      CG_EMBEDDED_FILE: file,
      CG_HTTP_SESSIONS_TOKEN: 'token-SECRET',
    });
    expect([r.status, r.stderr]).toEqual([
      2,
      `compaction-guard inspect: ${file} is not trusted: httpUrl "http://collector.example:80" is not on a loopback address. It tells the on-call commands where to send credentials; remove it (a running \`npm start\` writes it again, mode 0600) or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL\n`,
    ]);
  });
});
