/**
 * Security settings: parsing and validation of the SASL / TLS / registry-auth settings, and
 * secrets kept out of logs (the start-up configuration lines, kafkajs-shaped entries, errors).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  ConfigError,
  DEFAULTS,
  isLoopbackHost,
  loadConfig,
  refuseUnsafeConfig,
  requireSafeHttp,
} from '../../src/config/config';
import { createLogger, logConfiguration, REDACTED, redactConfig } from '../../src/config/redact';
import { kafkaSasl, kafkaSsl } from '../../src/kafka/kafkajs/client';
import { buildProgram } from '../../src/cli/main';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
let dir: string;
let caFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cg-config-sec-'));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, PEM);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCRAM = {
  CG_KAFKA_SASL_MECHANISM: 'scram-sha-512',
  CG_KAFKA_SASL_USERNAME: 'svc-guard',
  CG_KAFKA_SASL_PASSWORD: 'kafka-pa55-SECRET',
};

describe('security settings', () => {
  it('defaults: no SASL, no TLS, verification on, no registry auth', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      kafkaSaslMechanism: 'none',
      kafkaSaslUsername: null,
      kafkaSaslPassword: null,
      kafkaSsl: false,
      kafkaSslCa: null,
      kafkaSslRejectUnauthorized: true,
      registryUsername: null,
      registryPassword: null,
      registryCa: null,
    });
    expect(kafkaSasl(c)).toBeUndefined();
    expect(kafkaSsl(c)).toBeUndefined();
  });

  it('reads SASL and TLS from env; flags win', () => {
    const c = loadConfig(
      { ...SCRAM, CG_KAFKA_SSL: 'true', CG_KAFKA_SSL_CA: caFile },
      { kafkaSaslUsername: 'from-flag' },
    );
    expect(c).toMatchObject({
      kafkaSaslMechanism: 'scram-sha-512',
      kafkaSaslUsername: 'from-flag',
      kafkaSsl: true,
      kafkaSslCa: caFile,
    });
    expect(kafkaSasl(c)).toEqual({
      mechanism: 'scram-sha-512',
      username: 'from-flag',
      password: 'kafka-pa55-SECRET',
    });
    expect(kafkaSsl(c)).toEqual({ rejectUnauthorized: true, ca: [PEM] });
  });

  it('a mechanism without username or password is rejected, naming what is missing', () => {
    expect(() =>
      loadConfig({ CG_KAFKA_SASL_MECHANISM: 'plain', CG_KAFKA_SASL_USERNAME: 'u' }),
    ).toThrow(/CG_KAFKA_SASL_PASSWORD/);
    expect(() => loadConfig({ CG_KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toThrow(
      /CG_KAFKA_SASL_USERNAME and CG_KAFKA_SASL_PASSWORD/,
    );
    expect(() => loadConfig({ CG_KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(ConfigError);
    expect(() => loadConfig({ CG_KAFKA_SASL_USERNAME: 'u', CG_KAFKA_SASL_PASSWORD: 'p' })).toThrow(
      /CG_KAFKA_SASL_MECHANISM .*is none/,
    );
  });

  it('the CA file must exist, be readable and hold a PEM certificate; a CA turns TLS on', () => {
    expect(() => loadConfig({ CG_KAFKA_SSL_CA: join(dir, 'missing.pem') })).toThrow(
      /CG_KAFKA_SSL_CA.*ENOENT/,
    );
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'hello');
    expect(() => loadConfig({ CG_KAFKA_SSL_CA: notPem })).toThrow(/no PEM certificate/);
    expect(loadConfig({ CG_KAFKA_SSL_CA: caFile }).kafkaSsl).toBe(true);
    expect(() => loadConfig({ CG_KAFKA_SSL_CA: caFile, CG_KAFKA_SSL: 'false' })).toThrow(
      /CG_KAFKA_SSL .*false/,
    );
    expect(() => loadConfig({ CG_KAFKA_SSL: 'yes' })).toThrow(/true or false/);
    expect(() => loadConfig({ CG_REGISTRY_CA: join(dir, 'missing.pem') })).toThrow(
      /CG_REGISTRY_CA/,
    );
    expect(() =>
      loadConfig({ CG_REGISTRY_CA: caFile, SCHEMA_REGISTRY_URL: 'http://r:8080' }),
    ).toThrow(/not https/);
    const c = loadConfig({
      CG_REGISTRY_CA: caFile,
      SCHEMA_REGISTRY_URL: 'https://r:8443',
      CG_KAFKA_SSL: 'true',
      CG_KAFKA_SSL_REJECT_UNAUTHORIZED: 'false',
    });
    expect(c.registryCa).toBe(caFile);
    expect(kafkaSsl(c)).toEqual({ rejectUnauthorized: false });
  });

  it('registry basic auth needs both halves', () => {
    expect(() => loadConfig({ CG_REGISTRY_USERNAME: 'u' })).toThrow(/CG_REGISTRY_PASSWORD/);
    expect(loadConfig({ CG_REGISTRY_USERNAME: 'u', CG_REGISTRY_PASSWORD: 'p' })).toMatchObject({
      registryUsername: 'u',
      registryPassword: 'p',
    });
  });

  it('secrets can come from <ENV>_FILE (trailing newline dropped); the plain env var wins', () => {
    const f = join(dir, 'kafka-password');
    writeFileSync(f, 'from-file secret\n');
    const env = {
      CG_KAFKA_SASL_MECHANISM: 'scram-sha-256',
      CG_KAFKA_SASL_USERNAME: 'u',
      CG_KAFKA_SASL_PASSWORD_FILE: f,
    };
    expect(loadConfig(env).kafkaSaslPassword).toBe('from-file secret');
    expect(loadConfig({ ...env, CG_KAFKA_SASL_PASSWORD: 'direct' }).kafkaSaslPassword).toBe(
      'direct',
    );
    writeFileSync(join(dir, 'reg'), 'r3g');
    expect(
      loadConfig({ CG_REGISTRY_USERNAME: 'u', CG_REGISTRY_PASSWORD_FILE: join(dir, 'reg') })
        .registryPassword,
    ).toBe('r3g');
    expect(() => loadConfig({ ...env, CG_KAFKA_SASL_PASSWORD_FILE: join(dir, 'nope') })).toThrow(
      /CG_KAFKA_SASL_PASSWORD_FILE.*ENOENT/,
    );
  });

  it('run --help lists the new settings (and the _FILE variants of secrets)', () => {
    const run = buildProgram().commands.find((c) => c.name() === 'run')!;
    const help = run.helpInformation();
    for (const flag of [
      '--kafka-sasl-mechanism',
      '--kafka-sasl-password',
      '--kafka-ssl-ca',
      '--registry-username',
      '--registry-ca',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toContain('CG_KAFKA_SASL_PASSWORD_FILE');
  });
});

/** The message of the ConfigError `f` throws. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('secure defaults', () => {
  it('HTTP binds the loopback; requests, connections and request sizes are capped; plaintext auth is off', () => {
    expect(DEFAULTS).toMatchObject({
      httpHost: '127.0.0.1',
      httpRequestTimeoutMs: 10_000,
      httpMaxConnections: 64,
      httpMaxRequestBytes: 16_384,
      allowPlaintextAuth: false,
    });
    expect(() => requireSafeHttp(DEFAULTS)).not.toThrow();
  });

  it('a non-loopback bind with /sessions on and no token is refused', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'guard.internal'])
      expect(refusal(() => requireSafeHttp(loadConfig({ CG_HTTP_HOST: host })))).toBe(
        `CG_HTTP_HOST (--http-host)=${host} is not a loopback address and /sessions is served without a token: set CG_HTTP_SESSIONS_TOKEN (or _FILE), or CG_HTTP_SESSIONS=false, or bind CG_HTTP_HOST=127.0.0.1`,
      );
  });

  it('passes a token, /sessions off, or a loopback address', () => {
    for (const env of [
      { CG_HTTP_HOST: '0.0.0.0', CG_HTTP_SESSIONS_TOKEN: 't' },
      { CG_HTTP_HOST: '0.0.0.0', CG_HTTP_SESSIONS: 'false' },
      { CG_HTTP_HOST: 'localhost' },
      { CG_HTTP_HOST: '::1' },
      { CG_HTTP_HOST: '127.0.0.53' },
    ])
      expect(() => requireSafeHttp(loadConfig(env))).not.toThrow();
  });

  it('knows loopback addresses only by their literal form', () => {
    for (const h of [
      '127.0.0.1',
      '127.1.2.3',
      'localhost',
      'LOCALHOST',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
    ])
      expect([h, isLoopbackHost(h)]).toEqual([h, true]);
    for (const h of [
      '0.0.0.0',
      '::',
      '128.0.0.1',
      '127.0.0.1.nip.io',
      'localhost.example',
      '',
      '1.2.3.4',
    ])
      expect([h, isLoopbackHost(h)]).toEqual([h, false]);
  });

  it('the HTTP limits are settings with lower bounds', () => {
    expect(
      loadConfig({
        CG_HTTP_REQUEST_TIMEOUT_MS: '500',
        CG_HTTP_MAX_CONNECTIONS: '3',
        CG_HTTP_MAX_REQUEST_BYTES: '4096',
      }),
    ).toMatchObject({
      httpRequestTimeoutMs: 500,
      httpMaxConnections: 3,
      httpMaxRequestBytes: 4096,
    });
    expect(() => loadConfig({ CG_HTTP_MAX_CONNECTIONS: '0' })).toThrow(/CG_HTTP_MAX_CONNECTIONS/);
    expect(() => loadConfig({ CG_HTTP_MAX_REQUEST_BYTES: '100' })).toThrow(/≥ 1024/);
  });

  it('credentials in SCHEMA_REGISTRY_URL are refused, saying where they go, without echoing them', () => {
    for (const url of [
      'http://user:pa55@registry:8081',
      'https://user@registry:8081/apis',
      'HTTPS://u:p@r',
    ]) {
      const message = refusal(() => loadConfig({ SCHEMA_REGISTRY_URL: url }));
      expect(message).toBe(
        'SCHEMA_REGISTRY_URL (--registry-url): credentials in the URL are refused (the URL is logged and shown in errors); give them as CG_REGISTRY_USERNAME and CG_REGISTRY_PASSWORD (or CG_REGISTRY_PASSWORD_FILE)',
      );
    }
    expect(refusal(() => loadConfig({ SCHEMA_REGISTRY_URL: 'user:pa55@registry' }))).not.toContain(
      'pa55',
    );
    // The same for a URL given in code (the client's overrides).
    expect(
      refusal(() => refuseUnsafeConfig({ ...DEFAULTS, registryUrl: 'http://u:pa55@r:1' })),
    ).toMatch(/credentials in the URL are refused/);
    // An @ after the host is not a credential.
    expect(loadConfig({ SCHEMA_REGISTRY_URL: 'https://r:8081/a@b' }).registryUrl).toBe(
      'https://r:8081/a@b',
    );
  });

  it('SASL PLAIN without TLS is refused unless CG_ALLOW_PLAINTEXT_AUTH=true; with TLS, or SCRAM, it passes', () => {
    const plain = {
      CG_KAFKA_SASL_MECHANISM: 'plain',
      CG_KAFKA_SASL_USERNAME: 'u',
      CG_KAFKA_SASL_PASSWORD: 'kafka-pa55-SECRET',
    };
    const message = refusal(() => loadConfig(plain));
    expect(message).toBe(
      'CG_KAFKA_SASL_MECHANISM (--kafka-sasl-mechanism)=plain without TLS sends the Kafka password in clear: set CG_KAFKA_SSL=true (or CG_KAFKA_SSL_CA), use scram-sha-512, or set CG_ALLOW_PLAINTEXT_AUTH (--allow-plaintext-auth)=true to accept that',
    );
    expect(loadConfig({ ...plain, CG_ALLOW_PLAINTEXT_AUTH: 'true' }).kafkaSaslMechanism).toBe(
      'plain',
    );
    expect(loadConfig({ ...plain, CG_KAFKA_SSL: 'true' }).kafkaSsl).toBe(true);
    expect(loadConfig({ ...plain, CG_KAFKA_SSL_CA: caFile }).kafkaSsl).toBe(true);
    expect(loadConfig(SCRAM).kafkaSaslMechanism).toBe('scram-sha-512');
    expect(() =>
      refuseUnsafeConfig({ ...DEFAULTS, kafkaSaslMechanism: 'plain', kafkaSaslUsername: 'u' }),
    ).toThrow(ConfigError);
  });

  it('registry basic auth over http:// is refused unless CG_ALLOW_PLAINTEXT_AUTH=true; over https it passes', () => {
    const auth = { CG_REGISTRY_USERNAME: 'u', CG_REGISTRY_PASSWORD: 'registry-pa55-SECRET' };
    expect(refusal(() => loadConfig({ ...auth, SCHEMA_REGISTRY_URL: 'http://r:8081' }))).toBe(
      'registry basic auth (CG_REGISTRY_USERNAME) over http:// sends the registry password in clear: use an https:// SCHEMA_REGISTRY_URL, or set CG_ALLOW_PLAINTEXT_AUTH (--allow-plaintext-auth)=true to accept that',
    );
    expect(
      loadConfig({ ...auth, SCHEMA_REGISTRY_URL: 'http://r:8081', CG_ALLOW_PLAINTEXT_AUTH: 'true' })
        .registryUsername,
    ).toBe('u');
    expect(loadConfig({ ...auth, SCHEMA_REGISTRY_URL: 'https://r:8081' }).registryUsername).toBe(
      'u',
    );
  });
});

describe('secrets stay out of logs', () => {
  const secrets = ['kafka-pa55-SECRET', 'registry-pa55-SECRET', 'sessions-token-SECRET'];

  function capture(): { lines: string[]; stream: Writable } {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    return { lines, stream };
  }

  it('the start-up configuration line, raw config objects and kafkajs-shaped entries are redacted', () => {
    const c = loadConfig({
      ...SCRAM,
      CG_REGISTRY_USERNAME: 'reg-user',
      CG_REGISTRY_PASSWORD: 'registry-pa55-SECRET',
      CG_HTTP_SESSIONS_TOKEN: 'sessions-token-SECRET',
    });
    const { lines, stream } = capture();
    const log = createLogger('debug', stream);
    logConfiguration(log, c); // what startProcessor logs: what differs, and all of it at debug
    log.info({ config: c }, 'a careless caller logging the raw config');
    log.info(c, 'or spreading it at the top level');
    log
      .child({ component: 'kafkajs' })
      .debug(
        { sasl: kafkaSasl(c), headers: { authorization: 'Basic cmVnLXVzZXI6cmVnaXN0cnk=' } },
        'connect',
      );
    const out = lines.join('');
    expect(lines).toHaveLength(5);
    for (const s of [...secrets, 'Basic cmVn']) expect(out).not.toContain(s);
    expect(out).toContain(REDACTED);
    // What is not secret is still there to debug with.
    expect(out).toContain('svc-guard');
    expect(out).toContain('scram-sha-512');
    expect(out).toContain('reg-user');
  });

  it('redactConfig replaces only the secrets that are set', () => {
    const r = redactConfig({ ...DEFAULTS, kafkaSaslPassword: 'x' });
    expect(r.kafkaSaslPassword).toBe(REDACTED);
    expect(r.registryPassword).toBeNull();
    expect(r.httpSessionsToken).toBeNull();
    expect(r.groupId).toBe(DEFAULTS.groupId);
  });

  it('configuration errors do not echo secrets', () => {
    let message = '';
    try {
      loadConfig({ CG_KAFKA_SASL_PASSWORD: 'kafka-pa55-SECRET', CG_KAFKA_SASL_USERNAME: 'u' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('kafka-pa55-SECRET');
  });
});
