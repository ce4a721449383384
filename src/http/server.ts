/**
 * The processor's one small HTTP server: `/metrics` (Prometheus), `/healthz` (alive),
 * `/readyz` (group joined and state restored), `/sessions/{id}` (why was this session refused?).
 * `/sessions` can be switched off, or protected with a bearer token.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { RecentVerdicts } from './recentVerdicts';
import type { SessionDirectory } from './sessionDirectory';
import { sessionView } from './sessionView';
import { StartupError } from '../errors';

export interface HttpOptions {
  host: string;
  port: number;
  sessionsEnabled: boolean;
  /** When set, `/sessions` requires `Authorization: Bearer <token>`. */
  sessionsToken: string | null;
  /** A request (headers included) not received in this time gets 408 and its connection closed. */
  requestTimeoutMs: number;
  /** Connections beyond this many are closed as they arrive. */
  maxConnections: number;
  /** Headers larger than this get 431, a body larger than this 413. */
  maxRequestBytes: number;
}

export interface HttpDeps {
  registry: Registry;
  /** Ready: the consumer group joined and every assigned partition's state restored. */
  processor: { isReady(): boolean };
  /** Where `/sessions/{id}` finds a session. */
  sessions: SessionDirectory;
  recent: RecentVerdicts;
  /** Extra readiness conditions, e.g. the registry answering. */
  readinessProblems?: () => string[];
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
  res.end(text);
}

function tokenMatches(req: IncomingMessage, token: string): boolean {
  const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createHttpServer(o: HttpOptions, d: HttpDeps): Server {
  const server = createServer(
    {
      requestTimeout: o.requestTimeoutMs,
      headersTimeout: o.requestTimeoutMs,
      maxHeaderSize: o.maxRequestBytes,
      // Node checks the timeouts this often (default 30 s): a short timeout needs a short check.
      connectionsCheckingInterval: Math.min(1_000, o.requestTimeoutMs),
    },
    (req, res) => {
      if (bodyTooLarge(req, o.maxRequestBytes)) {
        res.setHeader('Connection', 'close');
        send(res, 413, { error: `request larger than ${o.maxRequestBytes} bytes` });
        return;
      }
      void handle(req, res, o, d).catch((e: unknown) =>
        send(res, 500, { error: (e as Error).message }),
      );
    },
  );
  server.maxConnections = o.maxConnections;
  // An idle kept-alive connection holds one of maxConnections: let it go soon.
  server.keepAliveTimeout = Math.min(5_000, o.requestTimeoutMs);
  return server;
}

/**
 * No route takes a body. A declared one over the cap is refused at once; one that is streamed
 * (chunked) is counted as it arrives, and the connection is cut when it passes the cap.
 */
function bodyTooLarge(req: IncomingMessage, max: number): boolean {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return true;
  let received = 0;
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > max) req.destroy();
  });
  return false;
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  o: HttpOptions,
  d: HttpDeps,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'only GET' });
  if (url.pathname === '/metrics')
    return send(res, 200, await d.registry.metrics(), d.registry.contentType);
  if (url.pathname === '/healthz') return send(res, 200, { status: 'alive' });
  if (url.pathname === '/readyz') {
    const problems = [
      ...(d.processor.isReady() ? [] : ['consumer group not joined or state not restored']),
      ...(d.readinessProblems?.() ?? []),
    ];
    return send(res, problems.length === 0 ? 200 : 503, { ready: problems.length === 0, problems });
  }
  const match = /^\/sessions\/(.+)$/.exec(url.pathname);
  if (match) {
    if (!o.sessionsEnabled)
      return send(res, 404, { error: '/sessions is disabled (CG_HTTP_SESSIONS=false)' });
    if (o.sessionsToken !== null && !tokenMatches(req, o.sessionsToken)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return send(res, 401, { error: 'a bearer token is required' });
    }
    const id = decodeURIComponent(match[1]!);
    const found = d.sessions.findSession(id);
    if (found)
      return send(
        res,
        200,
        sessionView(id, found.partition, found.state, d.recent.get(id), d.recent.violations(id)),
      );
    return send(res, 404, { error: `session ${id} is not tracked by this instance` });
  }
  return send(res, 404, {
    error: 'not found',
    routes: ['/metrics', '/healthz', '/readyz', '/sessions/{id}'],
  });
}

export async function listen(server: Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(portError(e, host, port)));
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * Fails at once when the HTTP port is taken, before anything slow (embedded JVMs, Kafka) is
 * started: a second `npm start` next to a running one is the usual cause.
 */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listen(probe, host, port);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

function portError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  if (e.code === 'EADDRINUSE')
    return new StartupError(
      'HTTP_PORT_UNAVAILABLE',
      `the HTTP port ${host}:${port} is already in use (is another compaction-guard running?) ` +
        '- stop it, or choose another port with CG_HTTP_PORT (--http-port)',
      { cause: e },
    );
  if (e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL')
    return new StartupError(
      'HTTP_PORT_UNAVAILABLE',
      `cannot listen on ${host}:${port} (${e.code}) - check CG_HTTP_HOST (--http-host) and CG_HTTP_PORT (--http-port)`,
      { cause: e },
    );
  return e;
}
