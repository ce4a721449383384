/**
 * The registry codec classifies the registry's answers for a writer's schema (src/registry/
 * codec.ts): 404 and the other 4xx are the record's (an AVRO_DECODE dead letter naming the
 * status), 5xx, a refused connection and the statuses about us rather than the id (401, 403,
 * 408, 429) make the batch wait; the cache of ids is bounded (LRU), unknown ids included.
 * Against a real HTTP server started here, answering per schema id.
 */
import { createServer, type Server } from 'node:http';
import { encodeEventAvro } from '../../src/schema/decodeEvent';
import { rawSchemas } from '../../src/schema/schemas';
import {
  RegistryCodec,
  RegistryUnavailableError,
  WRITER_CACHE_SIZE,
} from '../../src/registry/codec';
import { withHeader } from '../../src/registry/wireFormat';
import { SessionBuilder } from '../support/sessionBuilder';

const TOPICS = { inputTopic: 'in', verdictTopic: 'v', spillTopic: 's', auditTopic: 'a' };

/** Schema id → [status, body]; ids from 1000 up are unknown (404). */
const ANSWERS: Record<number, [number, string]> = {
  1: [200, JSON.stringify({ schema: rawSchemas.contextChangeEvent })],
  2: [200, JSON.stringify({ schema: '{"type":"string"}' })],
  3: [200, JSON.stringify({ schema: 'syntax = "proto3";', schemaType: 'PROTOBUF' })],
  400: [400, '{"error_code":400,"message":"bad id"}'],
  410: [410, 'gone'],
  422: [422, '{"error_code":42202,"message":"invalid"}'],
  401: [401, 'unauthorized'],
  403: [403, 'forbidden'],
  408: [408, 'timeout'],
  429: [429, 'slow down'],
  500: [500, 'internal'],
  503: [503, 'unavailable'],
};

describe('registry answers for a writer schema', () => {
  let server: Server;
  let url: string;
  const asked: number[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const id = Number(/\/schemas\/ids\/(\d+)$/.exec(req.url ?? '')?.[1]);
      asked.push(id);
      const [status, body] = ANSWERS[id] ?? [
        404,
        '{"error_code":40403,"message":"Schema not found"}',
      ];
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const event = new SessionBuilder('s', 1).open().events[0]!;
  const record = (id: number) => withHeader(id, encodeEventAvro(event));
  const codec = () => RegistryCodec.connect(url, TOPICS, undefined, undefined, 2_000);

  it('decodes a record whose writer schema the registry has', async () => {
    await expect(codec().decodeEvent(record(1))).resolves.toEqual({ ok: true, event });
  });

  it.each([
    [1234, /schema id 1234 is not in the registry \(HTTP 404\)/],
    [400, /refused schema id 400: HTTP 400/],
    [410, /refused schema id 410: HTTP 410/],
    [422, /refused schema id 422: HTTP 422/],
    [2, /schema id 2 is not a context-change event schema/],
    [3, /schema id 3 is a PROTOBUF schema, not Avro/],
  ])(
    'dead-letters a record of schema id %d (AVRO_DECODE, the reason in the message)',
    async (id, why) => {
      const c = codec();
      const d = await c.decodeEvent(record(id));
      expect(d).toEqual({
        ok: false,
        error: { code: 'AVRO_DECODE', message: expect.stringMatching(why) },
      });
      expect(c.unavailable).toBeNull();
    },
  );

  it.each([401, 403, 408, 429, 500, 503])(
    'waits on HTTP %d: RegistryUnavailableError, and /readyz is told why',
    async (status) => {
      const c = codec();
      await expect(c.decodeEvent(record(status))).rejects.toBeInstanceOf(RegistryUnavailableError);
      expect(c.unavailable).toContain(`HTTP ${status}`);
      // Not cached: the next record asks again.
      const before = asked.length;
      await expect(c.decodeEvent(record(status))).rejects.toBeInstanceOf(RegistryUnavailableError);
      expect(asked.length).toBe(before + 1);
      // The next answer clears it.
      await c.decodeEvent(record(1));
      expect(c.unavailable).toBeNull();
    },
  );

  it('waits when the registry refuses the connection', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const c = RegistryCodec.connect(`http://127.0.0.1:${port}`, TOPICS);
    await expect(c.decodeEvent(record(1))).rejects.toBeInstanceOf(RegistryUnavailableError);
    expect(c.unavailable).toMatch(/ECONNREFUSED/);
  });

  it(`keeps at most ${WRITER_CACHE_SIZE} ids, unknown ones included, least recently used out first`, async () => {
    const c = codec();
    await c.decodeEvent(record(1));
    for (let id = 5000; id < 5000 + WRITER_CACHE_SIZE + 200; id++) {
      await c.decodeEvent(record(id));
      if (id % 100 === 0) await c.decodeEvent(record(1)); // kept fresh
    }
    expect(c.cachedWriters).toBe(WRITER_CACHE_SIZE);
    const before = asked.length;
    await c.decodeEvent(record(1)); // still cached
    await c.decodeEvent(record(5000 + WRITER_CACHE_SIZE + 199)); // recent: cached
    expect(asked.length).toBe(before);
    await c.decodeEvent(record(5000)); // evicted: asked again
    expect(asked.length).toBe(before + 1);
  });
});
