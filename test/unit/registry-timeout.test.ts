/**
 * A schema registry that accepts a connection and never answers must not hold a batch forever:
 * the schema lookup gives up, and the input waits as for an unreachable registry (/readyz says
 * why). Against a real local TCP server that reads requests and never writes a byte.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { RegistryCodec, RegistryUnavailableError } from '../../src/registry/codec';
import { withHeader } from '../../src/registry/wireFormat';

const TOPICS = {
  inputTopic: 'in',
  verdictTopic: 'verdicts',
  spillTopic: 'spills',
  auditTopic: 'audit',
};

describe('registry that never answers', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();
  let requests = 0;

  beforeAll(async () => {
    server = createServer((s) => {
      sockets.add(s);
      s.on('data', () => requests++);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('a schema lookup times out as "registry unavailable" instead of waiting forever', async () => {
    const codec = RegistryCodec.connect(
      `http://127.0.0.1:${port}`,
      TOPICS,
      undefined,
      undefined,
      200,
    );
    const started = Date.now();
    const decoding = codec.decodeEvent(withHeader(42, Buffer.from([0, 2])));
    await expect(decoding).rejects.toBeInstanceOf(RegistryUnavailableError);
    const elapsed = Date.now() - started;
    expect(requests).toBeGreaterThanOrEqual(1); // it did ask, and got no answer
    // One attempt of 200 ms (the batch is what is retried), far below a test timeout.
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(4_000);
    expect(codec.unavailable).toMatch(/schema 42/);
    codec.close();
  });
});
