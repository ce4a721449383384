/**
 * A registry that stalls past one call's timeout, then answers again (seen in CI: Apicurio held
 * a PUT /config for more than 15 s once in a full run), costs the start-up one more attempt, not
 * the start-up: registerSchemas, which the processor, `simulate` and the client all use, tries
 * again. Against the real registry, behind a TCP relay that holds the first connections
 * without a byte of answer.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { RegistryCodec } from '../../src/registry/codec';
import { registerSchemas } from '../../src/registry/register';
import { seedIncident } from '../support/sessionBuilder';
import { registryUrl, testConfig } from './pipeline';

/**
 * Relays TCP to the registry, except that a connection is held unanswered from the first
 * request `hold` picks (given the request's first bytes and the connection's number): it reads
 * that request, and everything after it, and answers nothing.
 */
async function stallingRelay(target: URL, hold: (request: string, connection: number) => boolean) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    const connection = ++connections;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const upstream = createConnection(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    upstream.pipe(client);
    let held = false;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (!held && /^[A-Z]+ \//.test(text)) held = hold(text, connection);
      if (!held) upstream.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const TIMEOUT_MS = 2_000;

describe('a registry that stalls for a while', () => {
  it('costs registerSchemas another attempt, and the schemas are registered once it answers', async () => {
    const relay = await stallingRelay(new URL(registryUrl), (_, connection) => connection <= 2);
    const c = testConfig();
    // Long enough that a call the registry does answer is not given up on, even on a loaded
    // machine (at 300 ms, CI gave up on one: three retries where two were held).
    const codec = RegistryCodec.connect(relay.url, c, undefined, undefined, TIMEOUT_MS);
    const retried: string[] = [];
    try {
      await registerSchemas(codec, relay.url, (e) => retried.push((e as Error).message));
      // Both held connections were given up on as "no answer", then the real registry answered
      // (before registerSchemas ran out of attempts, or it would have thrown).
      expect(retried.length).toBeGreaterThanOrEqual(2);
      for (const message of retried.slice(0, 2))
        expect(message).toMatch(new RegExp(`no answer in ${TIMEOUT_MS} ms`));
      expect(relay.connections()).toBeGreaterThan(2);
      // Registered for real: the same schemas through the registry itself keep their ids.
      const direct = RegistryCodec.connect(registryUrl, c);
      try {
        await registerSchemas(direct, registryUrl);
        const [event] = seedIncident('stall').events;
        expect(codec.encodeEvent(event!)).toEqual(direct.encodeEvent(event!));
      } finally {
        direct.close();
      }
    } finally {
      codec.close();
      await relay.close();
    }
  });

  it('a registration the client library gives up on (its timeout, which it reports as HTTP 400) is tried again, not taken for the registry refusing the schema (decision 245)', async () => {
    const c = testConfig();
    const verdictVersions = `/subjects/${c.verdictTopic}-value/versions`;
    let held = 0;
    // Holds the first registration of the verdict schema: the library's own POST, not ours.
    const relay = await stallingRelay(new URL(registryUrl), (request) => {
      if (held > 0 || !request.startsWith('POST ') || !request.includes(verdictVersions))
        return false;
      held++;
      return true;
    });
    const codec = RegistryCodec.connect(relay.url, c, undefined, undefined, TIMEOUT_MS);
    const retried: unknown[] = [];
    try {
      await registerSchemas(codec, relay.url, (e) => retried.push(e));
      expect(held).toBe(1);
      expect(retried).toHaveLength(1);
      const [first] = retried as Error[];
      expect(first).toMatchObject({ code: 'REGISTRY_UNAVAILABLE' });
      expect(first!.message).toContain(
        `registering ${c.verdictTopic}-value: no answer of the registry's own`,
      );
      expect(first!.message).toContain(`Timeout (${TIMEOUT_MS}ms)`);
      const [event] = seedIncident('stall-library').events;
      expect(codec.encodeEvent(event!).length).toBeGreaterThan(5);
    } finally {
      codec.close();
      await relay.close();
    }
  });
});
