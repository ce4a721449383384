/** The processor's HTTP server against a running processor on the real broker. */
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { seedIncident } from '../support/sessionBuilder';
import { codecFor, produceEvents, readTopics, start, testConfig } from './pipeline';

jest.setTimeout(180_000);

const get = async (port: number, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  return { status: res.status, text: await res.text() };
};

function promtoolAvailable(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('HTTP endpoints', () => {
  it('/readyz turns ready, /sessions/{id} names the evicted turns, /metrics counts the refusal', async () => {
    const c = testConfig({ httpSessionsToken: 'sekret' });
    const running = await start(c);
    try {
      const port = running.httpPort;
      expect((await get(port, '/healthz')).status).toBe(200);
      for (let i = 0; i < 100 && (await get(port, '/readyz')).status !== 200; i++)
        await new Promise((r) => setTimeout(r, 200));
      expect((await get(port, '/readyz')).status).toBe(200);

      await produceEvents(c, seedIncident('http-seed').events, codecFor(c));
      await readTopics([c.verdictTopic], (rs) => rs.length >= 1);

      expect((await get(port, '/sessions/http-seed')).status).toBe(401);
      const view = await get(port, '/sessions/http-seed', { Authorization: 'Bearer sekret' });
      expect(view.status).toBe(200);
      const body = JSON.parse(view.text) as Record<string, unknown>;
      expect(body.evicted).toEqual([{ unit: 'TURNS', start: 0, end: 8 }]);
      expect(body.truncated).toEqual([{ unit: 'TURNS', start: 0, end: 8 }]);
      expect(body.lastVerdicts).toMatchObject([{ decision: 'REFUSE', action: 'SPILL' }]);
      expect(JSON.stringify(body)).not.toContain('sekret');
      expect((await get(port, '/sessions/nobody', { Authorization: 'Bearer sekret' })).status).toBe(
        404,
      );

      const metrics = (await get(port, '/metrics')).text;
      expect(metrics).toMatch(
        /compaction_guard_verdicts_total\{decision="REFUSE",action="SPILL"\} 1/,
      );
      expect(metrics).toMatch(/compaction_guard_refusal_reasons_total\{code="EVICTED_PINNED"\} 1/);
      expect(metrics).toMatch(/compaction_guard_sessions_tracked 1/);
      expect(metrics).toMatch(/compaction_guard_transactions_total\{outcome="committed"\} [1-9]/);
      if (promtoolAvailable()) {
        const out = execFileSync('promtool', ['check', 'metrics'], { input: metrics }).toString();
        expect(out.trim()).toBe('');
      }
    } finally {
      await running.stop();
    }
  });
});

/** A raw HTTP/1.1 exchange: what the server wrote before it closed the connection (or `ms` ran out). */
function raw(
  port: number,
  request: string | null,
  ms = 5_000,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, ms);
    socket.on('data', (b: Buffer) => (text += b.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    if (request !== null) socket.write(request);
  });
}

/** A connection that is open (accepted) and idle. */
async function idleConnection(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  return socket;
}

describe('HTTP limits', () => {
  it('a slow request gets 408, a connection over the cap is closed unanswered, big headers 431, a big body 413', async () => {
    const c = testConfig({
      httpRequestTimeoutMs: 2_000,
      httpMaxConnections: 2,
      httpMaxRequestBytes: 2_048,
    });
    const running = await start(c);
    const port = running.httpPort;
    try {
      // Headers never finished: answered 408 and closed once the request timeout has passed.
      const started = Date.now();
      const slow = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
      expect(slow.closed).toBe(true);
      expect(slow.text).toMatch(/^HTTP\/1\.1 408/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
      expect(Date.now() - started).toBeLessThan(5_000);

      // Two idle connections take the cap: a third is closed without an answer.
      const held = [await idleConnection(port), await idleConnection(port)];
      const over = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(over).toEqual({ text: '', closed: true });
      for (const s of held) s.destroy();
      await new Promise((r) => setTimeout(r, 200));
      expect((await get(port, '/healthz')).status).toBe(200);

      const bigHeader = await raw(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(4_096)}\r\n\r\n`,
      );
      expect(bigHeader.text).toMatch(/^HTTP\/1\.1 431/);
      const bigBody = await raw(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n${'b'.repeat(4_096)}`,
      );
      expect(bigBody.text).toMatch(/^HTTP\/1\.1 413/);
      expect(bigBody.closed).toBe(true);
      // A streamed (chunked) body is cut off once it passes the cap: at once, not when the
      // kept-alive connection would time out (2 s).
      const chunk = `800\r\n${'c'.repeat(0x800)}\r\n`;
      const streamed = await raw(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}${chunk}${chunk}`,
        1_000,
      );
      expect(streamed.closed).toBe(true);
      // Within the limits, all is as before.
      expect((await get(port, '/healthz')).status).toBe(200);
    } finally {
      await running.stop();
    }
  });
});
