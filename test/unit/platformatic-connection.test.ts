/**
 * The Config as @platformatic/kafka's base client options (src/kafka/platformatic/connection.ts):
 * each security setting of the project reaches the library as the option it reads, and the Node
 * version the library needs is checked before it is loaded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ConfigError, DEFAULTS, type Config } from '../../src/config/config';
import { CONNECTION_TIMEOUT_MS } from '../../src/kafka/client';
import {
  baseOptions,
  nodeAtLeast,
  requirePlatformaticNode,
} from '../../src/kafka/platformatic/connection';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('the base client options of @platformatic/kafka', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-plat-conn-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const config = (c: Partial<Config>): Config => ({
    ...DEFAULTS,
    brokers: ['k1:9092', 'k2:9092'],
    clientId: 'me',
    ...c,
  });

  it('plaintext: the brokers, the client id and the connect timeout, no TLS, no SASL', () => {
    expect(baseOptions(config({}))).toEqual({
      clientId: 'me',
      bootstrapBrokers: ['k1:9092', 'k2:9092'],
      connectTimeout: CONNECTION_TIMEOUT_MS,
    });
  });

  it('CG_KAFKA_SSL with the system CAs: TLS, verifying the broker', () => {
    expect(baseOptions(config({ kafkaSsl: true })).tls).toEqual({ rejectUnauthorized: true });
  });

  it('CG_KAFKA_SSL_CA: TLS trusting the CA file, read once', () => {
    const ca = path.join(dir, 'ca.pem');
    writeFileSync(ca, PEM);
    expect(baseOptions(config({ kafkaSsl: true, kafkaSslCa: ca })).tls).toEqual({
      rejectUnauthorized: true,
      ca: [PEM],
    });
  });

  it('CG_KAFKA_SSL_REJECT_UNAUTHORIZED=false: TLS without verification', () => {
    expect(baseOptions(config({ kafkaSsl: true, kafkaSslRejectUnauthorized: false })).tls).toEqual({
      rejectUnauthorized: false,
    });
  });

  it.each([
    ['plain', 'PLAIN'],
    ['scram-sha-256', 'SCRAM-SHA-256'],
    ['scram-sha-512', 'SCRAM-SHA-512'],
  ] as const)(
    'CG_KAFKA_SASL_MECHANISM=%s: the library mechanism %s with the credentials',
    (m, lib) => {
      const o = baseOptions(
        config({
          kafkaSaslMechanism: m,
          kafkaSaslUsername: 'alice',
          kafkaSaslPassword: 'secret ',
          kafkaSsl: true,
        }),
      );
      expect(o.sasl).toEqual({ mechanism: lib, username: 'alice', password: 'secret ' });
      expect(o.tls).toEqual({ rejectUnauthorized: true });
    },
  );

  it('CG_KAFKA_SASL_MECHANISM=none: no SASL, whatever credentials are set', () => {
    expect(baseOptions(config({ kafkaSaslUsername: 'alice' })).sasl).toBeUndefined();
  });
});

describe('the Node version @platformatic/kafka needs', () => {
  it('compares versions part by part', () => {
    expect(nodeAtLeast('22.22.0', '22.22.0')).toBe(true);
    expect(nodeAtLeast('22.23.3', '22.22.0')).toBe(true);
    expect(nodeAtLeast('24.0.0', '22.22.0')).toBe(true);
    expect(nodeAtLeast('22.9.10', '22.22.0')).toBe(false);
    expect(nodeAtLeast('20.20.2', '22.22.0')).toBe(false);
  });

  it('refuses an older Node with one line naming the setting, as a config error (exit 2)', () => {
    let error: unknown;
    try {
      requirePlatformaticNode('20.20.2');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^CG_KAFKA_CLIENT=platformatic needs Node ≥ 22\.22\.0 \(this is 20\.20\.2\)/,
    );
    expect(message).not.toContain('\n');
    expect(() => requirePlatformaticNode('22.22.0')).not.toThrow();
  });
});
