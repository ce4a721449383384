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

/** Relays TCP to the registry, except that the first `stalled` connections are held unanswered. */
async function stallingRelay(target: URL, stalled: number) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (++connections <= stalled) return; // reads the request, answers nothing
    const upstream = createConnection(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
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
    const relay = await stallingRelay(new URL(registryUrl), 2);
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
});
