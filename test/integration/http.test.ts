/** The processor's HTTP server against a running processor on the real broker. */
import { execFileSync } from 'node:child_process';
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
