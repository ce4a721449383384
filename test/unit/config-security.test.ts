/**
 * Security settings: parsing and validation of the SASL / TLS / registry-auth settings, and
 * secrets kept out of logs (the start-up configuration line, kafkajs-shaped entries, errors).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ConfigError, DEFAULTS, loadConfig } from '../../src/config/config';
import { createLogger, REDACTED, redactConfig } from '../../src/config/redact';
import { kafkaSasl, kafkaSsl } from '../../src/kafka/client';
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
      CG_KAFKA_SASL_MECHANISM: 'plain',
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
    log.info({ config: redactConfig(c) }, 'configuration'); // what startProcessor logs
    log.info({ config: c }, 'a careless caller logging the raw config');
    log.info(c, 'or spreading it at the top level');
    log
      .child({ component: 'kafkajs' })
      .debug(
        { sasl: kafkaSasl(c), headers: { authorization: 'Basic cmVnLXVzZXI6cmVnaXN0cnk=' } },
        'connect',
      );
    const out = lines.join('');
    expect(lines).toHaveLength(4);
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
