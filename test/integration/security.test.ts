/**
 * Secured connections end to end: a dedicated local Kafka broker with a SASL_SSL listener
 * (SCRAM-SHA-512, certificate from a test CA) and an https schema-registry front that requires
 * basic auth (a small node:https proxy to the real registry: Apicurio here runs without auth).
 * Proves: the seed's scenario over SASL_SSL + https/basic-auth registry; a wrong password and a
 * wrong CA fail start-up fast with a clear error; wrong registry credentials / CA fail clearly;
 * /sessions shows no secrets.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Kafka, Message } from 'kafkajs';
import { DEFAULTS, type Config } from '../../src/config/config';
import { createLogger } from '../../src/config/redact';
import { startProcessor } from '../../src/cli/run';
import { KafkaSecurityError, kafkaClient } from '../../src/kafka/client';
import { RegistryAuthError, RegistryCodec } from '../../src/registry/codec';
import { startLocalKafka, type LocalKafka } from '../../src/services/localKafka';
import { cacheDir, DEFAULT_KAFKA_VERSION } from '../../src/services/maven';
import { seedIncident } from '../support/sessionBuilder';
import type { ContextEvent } from '../../src/engine/events';
import { decodeOutput, readTopics } from './pipeline';
import { serviceEnv } from './env';
import { makeTestPki, type TestPki } from './tls';

jest.setTimeout(240_000);

const KAFKA_USER = 'cg-admin';
const KAFKA_PASSWORD = 'kafka-Secret-4711';
const REGISTRY_USER = 'cg-registry';
const REGISTRY_PASSWORD = 'registry-Secret-0815';
const log = createLogger(process.env.CG_TEST_LOG ?? 'silent');

let workDir: string;
let pki: TestPki;
let kafka: LocalKafka;
let secureBroker: string;
let registry: HttpsServer;
let registryUrl: string;

/** https + basic auth in front of the real (plain http, no auth) registry. */
function startRegistryFront(upstream: string): Promise<HttpsServer> {
  const expected = `Basic ${Buffer.from(`${REGISTRY_USER}:${REGISTRY_PASSWORD}`).toString('base64')}`;
  const server = createHttpsServer(
    { key: readFileSync(pki.serverKeyFile), cert: readFileSync(pki.serverCertFile) },
    (req, res) => {
      if (req.headers.authorization !== expected) {
        res.writeHead(401, {
          'WWW-Authenticate': 'Basic realm="registry"',
          'Content-Type': 'application/json',
        });
        res.end(JSON.stringify({ error_code: 401, message: 'Unauthorized' }));
        return;
      }
      const { authorization: _a, host: _h, ...headers } = req.headers;
      const up = httpRequest(
        `${upstream}${req.url ?? '/'}`,
        { method: req.method, headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', (e) => {
        res.writeHead(502);
        res.end(e.message);
      });
      req.pipe(up);
    },
  );
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function secureConfig(overrides: Partial<Config> = {}): Config {
  const id = randomUUID().slice(0, 8);
  return {
    ...DEFAULTS,
    brokers: [secureBroker],
    registryUrl,
    groupId: `cg-sec-${id}`,
    inputTopic: `ctx-sec-${id}`,
    verdictTopic: `verdicts-sec-${id}`,
    spillTopic: `spills-sec-${id}`,
    auditTopic: `audit-sec-${id}`,
    dlqTopic: `ctx-sec-${id}.dlq`,
    changelogTopic: `state-sec-${id}`,
    partitions: 3,
    logLevel: 'silent',
    sessionTimeoutMs: 6000,
    httpHost: '127.0.0.1',
    httpPort: 0,
    allowUnsigned: true,
    kafkaSaslMechanism: 'scram-sha-512',
    kafkaSaslUsername: KAFKA_USER,
    kafkaSaslPassword: KAFKA_PASSWORD,
    kafkaSsl: true,
    kafkaSslCa: pki.caFile,
    registryUsername: REGISTRY_USER,
    registryPassword: REGISTRY_PASSWORD,
    registryCa: pki.caFile,
    httpSessionsToken: 'sessions-Token-42',
    ...overrides,
  };
}

async function produce(
  client: Kafka,
  c: Config,
  codec: RegistryCodec,
  events: readonly ContextEvent[],
): Promise<void> {
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const messages: Message[] = events.map((e) => ({
      key: e.sessionId,
      value: codec.encodeEvent(e),
    }));
    await producer.send({ topic: c.inputTopic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

/** A logger at debug level whose lines are kept (to check that no secret is in them). */
function capturingLogger(): { log: ReturnType<typeof createLogger>; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger('debug', stream), text: () => lines.join('') };
}

const SECRETS = [KAFKA_PASSWORD, REGISTRY_PASSWORD, 'sessions-Token-42', 'wrong-password'];

/** The rejection of `p` and how long it took. */
async function failure(p: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = Date.now();
  try {
    const value = await p;
    throw new Error(`expected a failure, got ${String(value)}`);
  } catch (e) {
    return { error: e as Error, ms: Date.now() - started };
  }
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'cg-security-'));
  pki = makeTestPki(workDir);
  const l = 'listener.name.secure';
  kafka = await startLocalKafka({
    cacheDir: cacheDir(),
    version: process.env.CG_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION,
    startTimeoutMs: 180_000,
    extraListeners: [{ name: 'SECURE', protocol: 'SASL_SSL' }],
    extraProperties: [
      'sasl.enabled.mechanisms=SCRAM-SHA-512',
      `${l}.sasl.enabled.mechanisms=SCRAM-SHA-512`,
      `${l}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
      `${l}.ssl.keystore.type=PKCS12`,
      `${l}.ssl.keystore.location=${pki.keystoreFile}`,
      `${l}.ssl.keystore.password=${pki.keystorePassword}`,
      `${l}.ssl.key.password=${pki.keystorePassword}`,
    ],
    // KRaft: SCRAM credentials go into the metadata log when the storage is formatted.
    formatArgs: ['--add-scram', `SCRAM-SHA-512=[name=${KAFKA_USER},password=${KAFKA_PASSWORD}]`],
  });
  secureBroker = kafka.listeners.SECURE!;
  registry = await startRegistryFront(serviceEnv().registryUrl);
  registryUrl = `https://127.0.0.1:${(registry.address() as AddressInfo).port}`;
}, 240_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (registry ? registry.close(() => resolve()) : resolve()));
  await kafka?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('Kafka over SASL_SSL (SCRAM-SHA-512)', () => {
  it("processes the seed's scenario; /sessions shows session state, no secrets", async () => {
    const c = secureConfig();
    const client = kafkaClient(c.brokers, 'cg-it-secure', log, c);
    const codec = RegistryCodec.fromConfig(c);
    const logged = capturingLogger();
    const running = await startProcessor(c, logged.log);
    try {
      await codec.registerAll();
      const b = seedIncident('seed-sec');
      await produce(client, c, codec, b.events);
      const first = await readTopics(
        [c.verdictTopic, c.spillTopic],
        (rs) => rs.length >= 2,
        undefined,
        client,
      );
      const [verdict] = first
        .filter((r) => r.topic === c.verdictTopic)
        .map((r) => decodeOutput(c, r));
      const [spill] = first.filter((r) => r.topic === c.spillTopic).map((r) => decodeOutput(c, r));
      expect(verdict).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
      if (spill?.record !== 'spill-request') throw new Error('no spill request');
      b.spilled(spill.spillRequestId, 'TURNS', 0, 52).request('compact-1', 'TURNS', 8, 40, 40);
      await produce(client, c, codec, b.events.slice(-2));
      const all = await readTopics([c.verdictTopic], (rs) => rs.length >= 2, undefined, client);
      expect(all.map((r) => decodeOutput(c, r))[1]).toMatchObject({
        decision: 'APPROVE',
        basis: 'LOSSLESS_SPILL',
      });

      const res = await fetch(`http://127.0.0.1:${running.httpPort}/sessions/seed-sec`, {
        headers: { Authorization: `Bearer ${c.httpSessionsToken}` },
      });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(body).toContain('seed-sec');
      for (const secret of [KAFKA_PASSWORD, REGISTRY_PASSWORD, c.httpSessionsToken!])
        expect(body).not.toContain(secret);
    } finally {
      await running.stop();
      codec.close();
    }
  });

  it('a wrong password fails start-up fast with an authentication error', async () => {
    const c = secureConfig({ kafkaSaslPassword: 'wrong-password' });
    const logged = capturingLogger();
    const { error, ms } = await failure(startProcessor(c, logged.log));
    for (const secret of SECRETS) expect(logged.text()).not.toContain(secret);
    expect(error).toBeInstanceOf(KafkaSecurityError);
    expect(error.message).toMatch(/authentication failed/i);
    expect(error.message).toContain(KAFKA_USER);
    expect(error.message).not.toContain('wrong-password');
    expect(ms).toBeLessThan(30_000);
    process.stderr.write(`[security] wrong password rejected in ${ms} ms: ${error.message}\n`);
  });

  it('a CA that did not sign the broker certificate fails start-up fast with a TLS error', async () => {
    const c = secureConfig({ kafkaSslCa: pki.otherCaFile });
    const { error, ms } = await failure(startProcessor(c, log));
    expect(error).toBeInstanceOf(KafkaSecurityError);
    expect(error.message).toMatch(/TLS handshake failed/);
    expect(error.message).toMatch(/certificate/i);
    expect(error.message).toContain('CG_KAFKA_SSL_CA');
    expect(ms).toBeLessThan(30_000);
    process.stderr.write(`[security] wrong CA rejected in ${ms} ms: ${error.message}\n`);
  });
});

describe('schema registry over https with basic auth', () => {
  const topics = () => {
    const id = randomUUID().slice(0, 8);
    return {
      inputTopic: `ctx-reg-${id}`,
      verdictTopic: `v-reg-${id}`,
      spillTopic: `s-reg-${id}`,
      auditTopic: `a-reg-${id}`,
    };
  };

  it('registers and resolves schemas with the right CA and credentials', async () => {
    const codec = RegistryCodec.connect(
      registryUrl,
      topics(),
      { username: REGISTRY_USER, password: REGISTRY_PASSWORD },
      { caFile: pki.caFile },
    );
    try {
      await codec.registerAll();
      const [event] = seedIncident('reg-roundtrip').events;
      const decoded = await codec.decodeEvent(codec.encodeEvent(event!)); // fetches the schema by id
      expect(decoded).toMatchObject({ ok: true });
    } finally {
      codec.close();
    }
  });

  it('wrong credentials fail clearly (401, not "registry unavailable")', async () => {
    const codec = RegistryCodec.connect(
      registryUrl,
      topics(),
      { username: REGISTRY_USER, password: 'nope' },
      { caFile: pki.caFile },
    );
    const { error } = await failure(codec.registerAll());
    codec.close();
    expect(error).toBeInstanceOf(RegistryAuthError);
    expect(error.message).toMatch(
      /HTTP 401.*basic auth as "cg-registry" rejected.*CG_REGISTRY_PASSWORD/,
    );
    expect(error.message).not.toContain('nope');
  });

  it('without the CA the registry certificate is not trusted', async () => {
    const codec = RegistryCodec.connect(
      registryUrl,
      topics(),
      { username: REGISTRY_USER, password: REGISTRY_PASSWORD },
      { caFile: pki.otherCaFile },
    );
    const { error } = await failure(codec.registerAll());
    codec.close();
    expect(error.message).toMatch(/certificate/i);
  });
});
