/**
 * Secured connections end to end: a dedicated local Kafka broker with a SASL_SSL listener
 * (SCRAM-SHA-512, certificate from a test CA) and an https schema-registry front that requires
 * basic auth (a small node:https proxy to the real registry: Apicurio here runs without auth).
 * Proves: the seed's scenario over SASL_SSL + https/basic-auth registry; a wrong password and a
 * wrong CA fail start-up fast with a clear error; wrong registry credentials / CA fail clearly;
 * /sessions shows no secrets. The broker runs KRaft's StandardAuthorizer: the processor and an
 * orchestrator, each its own SCRAM user, work under exactly the grants of src/kafka/acls.ts, and
 * the orchestrator cannot write a verdict, a changelog record or any other output.
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
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  type Kafka,
  type Message,
  ResourcePatternTypes,
} from 'kafkajs';
import { GuardClient } from '../../src/client';
import { aclsFor, type AclGrant } from '../../src/kafka/acls';
import { causeChain } from '../../src/errors';
import { DEFAULTS, type Config } from '../../src/config/config';
import { createLogger } from '../../src/config/redact';
import { startProcessor } from '../../src/cli/run';
import { KafkaSecurityError, connectionOptions } from '../../src/kafka/client';
import { kafkajsClient } from '../../src/kafka/kafkajs';
import { RegistryAuthError, RegistryCodec } from '../../src/registry/codec';
import { registerSchemas } from '../../src/registry/register';
import { startLocalKafka, type LocalKafka } from '../../src/services/localKafka';
import { cacheDir, DEFAULT_KAFKA_VERSION } from '../../src/services/maven';
import { seedIncident } from '../support/sessionBuilder';
import type { ContextEvent } from '../../src/engine/events';
import { decodeOutput, readTopics } from './pipeline';
import { serviceEnv } from './env';
import { makeTestPki, type TestPki } from './tls';

jest.setTimeout(240_000);

/** The super user (creates the ACLs; the tests before the ACL ones run as it). */
const KAFKA_USER = 'cg-admin';
const KAFKA_PASSWORD = 'kafka-Secret-4711';
/** SCRAM users of the ACL tests: each has only the grants of its role. */
const PROCESSOR = { user: 'cg-processor', password: 'processor-Secret-1' };
const ORCHESTRATOR = { user: 'cg-orchestrator', password: 'orchestrator-Secret-2' };
const REGISTRY_USER = 'cg-registry';
const REGISTRY_PASSWORD = 'registry-Secret-0815';
const log = createLogger(process.env.CG_TEST_LOG ?? 'silent');

/** A kafkajs client as the processor's (pino logs, TLS, SASL), for what the tests read and write. */
const kafkaClient = (...args: Parameters<typeof connectionOptions>) =>
  kafkajsClient(connectionOptions(...args));

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
      'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      // ANONYMOUS: the PLAINTEXT and CONTROLLER listeners (inter-broker and controller traffic,
      // and the readiness check), on the loopback only. Every SASL_SSL user but the admin is
      // held to its ACLs.
      `super.users=User:${KAFKA_USER};User:ANONYMOUS`,
    ],
    // KRaft: SCRAM credentials go into the metadata log when the storage is formatted.
    formatArgs: [{ user: KAFKA_USER, password: KAFKA_PASSWORD }, PROCESSOR, ORCHESTRATOR].flatMap(
      (u) => ['--add-scram', `SCRAM-SHA-512=[name=${u.user},password=${u.password}]`],
    ),
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
      await registerSchemas(codec, c.registryUrl);
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
      await registerSchemas(codec, registryUrl);
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

/** kafkajs ACL entries allowing `grants` to `User:<user>` from any host. */
function aclEntries(user: string, grants: readonly AclGrant[]) {
  return grants.flatMap((g) =>
    g.operations.map((operation) => ({
      resourceType: AclResourceTypes[g.resource],
      resourceName: g.name,
      resourcePatternType: ResourcePatternTypes[g.pattern],
      principal: `User:${user}`,
      host: '*',
      operation: AclOperationTypes[operation],
      permissionType: AclPermissionTypes.ALLOW,
    })),
  );
}

/** Creates the ACLs as the super user and waits until the broker's authorizer has them. */
async function grant(entries: ReturnType<typeof aclEntries>): Promise<void> {
  const admin = kafkaClient([secureBroker], 'cg-it-acl-admin', log, secureConfig()).admin();
  await admin.connect();
  try {
    await admin.createAcls({ acl: entries });
    const principals = [...new Set(entries.map((e) => e.principal))];
    for (let i = 0; ; i++) {
      let found = 0;
      for (const principal of principals) {
        const r = await admin.describeAcls({
          resourceType: AclResourceTypes.ANY,
          resourcePatternType: ResourcePatternTypes.ANY,
          principal,
          host: '*',
          operation: AclOperationTypes.ANY,
          permissionType: AclPermissionTypes.ANY,
        });
        found += r.resources.reduce((n, res) => n + res.acls.length, 0);
      }
      // Exactly these: no principal of the test has any other grant.
      if (found === entries.length) return;
      if (found > entries.length || i > 100)
        throw new Error(`${found} ACLs visible, ${entries.length} created`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.disconnect();
  }
}

/** The Kafka error type a failed send ended with (kafkajs may wrap it), or null if it was sent. */
async function sendFailure(client: Kafka, topic: string, transactionalId?: string) {
  const producer = client.producer(
    transactionalId === undefined
      ? { allowAutoTopicCreation: false, retry: { retries: 1 } }
      : { transactionalId, idempotent: true, maxInFlightRequests: 1, retry: { retries: 1 } },
  );
  try {
    await producer.connect();
    const messages = [{ key: 'acl-seed', value: 'a forged verdict' }];
    if (transactionalId === undefined) await producer.send({ topic, acks: -1, messages });
    else {
      const txn = await producer.transaction();
      await txn.send({ topic, acks: -1, messages });
      await txn.commit();
    }
    return null;
  } catch (e) {
    const typed = causeChain(e).find((x) => typeof (x as { type?: unknown }).type === 'string');
    return (typed as { type: string } | undefined)?.type ?? String(e);
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

describe('ACLs under StandardAuthorizer (src/kafka/acls.ts)', () => {
  it('the processor and an orchestrator work under exactly their grants; the orchestrator cannot write a verdict, a changelog record or any output', async () => {
    const c = secureConfig({
      kafkaSaslUsername: PROCESSOR.user,
      kafkaSaslPassword: PROCESSOR.password,
    });
    const oc: Config = {
      ...c,
      clientId: `cg-orch-${randomUUID().slice(0, 8)}`,
      kafkaSaslUsername: ORCHESTRATOR.user,
      kafkaSaslPassword: ORCHESTRATOR.password,
    };
    await grant([
      ...aclEntries(PROCESSOR.user, aclsFor('processor', c)),
      ...aclEntries(ORCHESTRATOR.user, aclsFor('orchestrator', oc)),
    ]);
    const orchestrator = kafkaClient(oc.brokers, oc.clientId, log, oc);
    const codec = RegistryCodec.fromConfig(c);
    // The processor creates its topics, joins its group and restores, as cg-processor only.
    const running = await startProcessor(c, log);
    try {
      await registerSchemas(codec, c.registryUrl);
      // The orchestrator's own client connects (it sees the input, creates nothing).
      const guard = new GuardClient({ env: {}, config: oc, logger: log });
      await guard.connect();
      await guard.close();

      // The seed's scenario, as the orchestrator: events in, verdicts and spill requests out.
      const b = seedIncident('acl-seed');
      await produce(orchestrator, c, codec, b.events);
      const read = (topics: string[], n: number, timeoutMs = 60_000) =>
        readTopics(topics, (rs) => rs.length >= n, timeoutMs, orchestrator, `${oc.clientId}-it`);
      const first = await read([c.verdictTopic, c.spillTopic], 2);
      const [spill] = first.filter((r) => r.topic === c.spillTopic).map((r) => decodeOutput(c, r));
      if (spill?.record !== 'spill-request') throw new Error('no spill request');
      b.spilled(spill.spillRequestId, 'TURNS', 0, 52).request('compact-1', 'TURNS', 8, 40, 40);
      await produce(orchestrator, c, codec, b.events.slice(-2));
      const verdicts = (await read([c.verdictTopic], 2)).map((r) => decodeOutput(c, r));
      expect(verdicts).toMatchObject([
        { decision: 'REFUSE', action: 'SPILL' },
        { decision: 'APPROVE', basis: 'LOSSLESS_SPILL' },
      ]);

      // Every output topic refuses the orchestrator's writes; so does the processor's
      // transactional id (no writing as the processor either).
      for (const topic of [
        c.verdictTopic,
        c.changelogTopic,
        c.spillTopic,
        c.auditTopic,
        c.dlqTopic,
      ])
        expect([topic, await sendFailure(orchestrator, topic)]).toEqual([
          topic,
          'TOPIC_AUTHORIZATION_FAILED',
        ]);
      // kafkajs reports a refused FindCoordinator as "not found"; its debug log has the broker's answer.
      const logged = capturingLogger();
      const asProcessor = kafkaClient(oc.brokers, oc.clientId, logged.log, oc);
      expect(
        await sendFailure(asProcessor, c.verdictTopic, `${c.groupId}-${c.inputTopic}-0`),
      ).toMatch(/KafkaJSGroupCoordinatorNotFound/);
      expect(logged.text()).toContain('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');

      // So a forged verdict cannot reach a client: the verdict topic holds the processor's two.
      const all = await read([c.verdictTopic], 3, 5_000);
      expect(all.map((r) => decodeOutput(c, r))).toMatchObject([
        { decision: 'REFUSE' },
        { decision: 'APPROVE' },
      ]);
    } finally {
      await running.stop();
      codec.close();
    }
  });
});
