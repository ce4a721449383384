/**
 * The dashboard and the alerts against a real Prometheus scraping a real processor: every
 * dashboard query and every alert expression runs on Prometheus' HTTP API and finds data, the
 * alerts that the produced events should trip do fire, and /metrics passes `promtool check
 * metrics`.
 *
 * Events go in two phases, with scrapes in between, because Prometheus only sees a counter
 * increase between two samples: phase 1 creates the labelled series (a dead letter, violations,
 * refusals), phase 2 increments them.
 *
 * How alert expressions are checked: each is queried whole (status success; it may be empty
 * when its condition does not hold, e.g. the refusal ratio), and so is each operand of its
 * top-level `and` / `or` / `unless` without its final comparison (`> 0`, `>= 50`): those are the
 * values the conditions compare, and each must return data. An `absent(...)` operand must be
 * empty (its metric exists). Every vector selector of the expression must return data too.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Running } from '../../src/cli/run';
import { haltThenAcknowledgeExample } from '../support/examples';
import { ROOT, alertRules, dashboardTargets, selectors, withIntervals } from '../support/promql';
import {
  codecFor,
  liveFleet,
  offline,
  produceEvents,
  produceRaw,
  start,
  testConfig,
} from './pipeline';
import { PROMETHEUS, type PrometheusServer, startPrometheus } from '../support/prometheusServer';
import { until } from '../support/until';

jest.setTimeout(180_000);

const JOB = 'compaction-guard';
/** `$__rate_interval` and friends: 30 scrapes at 1 s, shorter than the test's life. */
const INTERVAL = '30s';

interface AlertsResult {
  status: string;
  data: { alerts: { labels: Record<string, string>; state: string }[] };
}

/** Operands of top-level `and` / `or` / `unless`, each without a final scalar comparison. */
function valueOperands(expr: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') depth--;
    else if (depth === 0) {
      const m = /^\s(and|or|unless)(\s+(on|ignoring)\s*\([^)]*\))?\s/.exec(expr.slice(i));
      if (m) {
        parts.push(expr.slice(start, i));
        i += m[0].length - 1;
        start = i + 1;
      }
    }
  }
  parts.push(expr.slice(start));
  return parts.map((p) => p.replace(/\s*(==|!=|>=|<=|>|<)\s*(bool\s+)?[\d.e+-]+\s*$/, '').trim());
}

describe('Prometheus on the live processor', () => {
  let running: Running | undefined;
  let prometheus: PrometheusServer | undefined;

  afterAll(async () => {
    await prometheus?.stop();
    await running?.stop();
  });

  it('every dashboard query and alert expression returns data; the tripped alerts fire', async () => {
    if (!existsSync(PROMETHEUS)) {
      if (process.env.CI)
        throw new Error(`${PROMETHEUS} not found (CI installs the prometheus package: .ci/run)`);
      console.warn(`SKIPPED: ${PROMETHEUS} not found (Debian package \`prometheus\`)`);
      return;
    }

    // Events: a simulated fleet whose faulty sessions commit without approval and halt
    // (spill DISABLED), split in two phases, plus a halting session and a garbage record per phase.
    const { events } = liveFleet({
      sessions: 40,
      events: 3000,
      seed: 7,
      faultyShare: 0.5,
      spillAck: false,
    });
    const phase1 = [...haltThenAcknowledgeExample(), ...events.slice(0, 1500)];
    const phase2 = events.slice(1500);
    const count = (records: ReturnType<typeof offline>, code: string) =>
      records.filter((r) => r.record === 'audit' && r.code === code).length;
    const cwa1 = count(offline(phase1), 'COMMITTED_WITHOUT_APPROVAL');
    const all = offline([...phase1, ...phase2]);
    expect(cwa1).toBeGreaterThan(0);
    expect(count(all, 'COMMITTED_WITHOUT_APPROVAL')).toBeGreaterThan(cwa1);
    expect(all.some((r) => r.record === 'verdict' && r.action === 'HALT')).toBe(true);

    const c = testConfig();
    running = await start(c);
    const metricsUrl = `http://127.0.0.1:${running.httpPort}/metrics`;
    await until('/readyz', async () =>
      (await fetch(`http://127.0.0.1:${running!.httpPort}/readyz`)).status === 200
        ? true
        : undefined,
    );

    // Prometheus: scrape every second, evaluate alerts.yml every second, temporary storage.
    prometheus = await startPrometheus(
      JOB,
      [`127.0.0.1:${running.httpPort}`],
      [path.join(ROOT, 'prometheus/alerts.yml')],
    );
    const { api, query } = prometheus;
    const prometheusLog = prometheus.log;
    const scraped = async () => {
      const r = await query(`up{job="${JOB}"} == 1`);
      return r.data?.result.length ? true : undefined;
    };
    try {
      await until('the first scrape', scraped, 30_000);
    } catch (e) {
      throw new Error(`${String(e)}\nprometheus log:\n${prometheusLog()}`);
    }
    /** Waits until Prometheus has scraped `n` more times. */
    const scrapes = async (n: number) => {
      const samples = async () =>
        Number(
          (await query(`count_over_time(up{job="${JOB}"}[5m])`)).data?.result[0]?.value[1] ?? 0,
        );
      const target = (await samples()) + n;
      await until(
        `${n} scrapes`,
        async () => ((await samples()) >= target ? true : undefined),
        30_000,
      );
    };
    /** Waits until the processor has handled `n` input records (events and dead letters). */
    const processed = async (n: number) => {
      const total = async () => {
        let sum = 0;
        for (const m of await running!.metrics.registry.getMetricsAsJSON()) {
          if (
            m.name === 'compaction_guard_events_total' ||
            m.name === 'compaction_guard_dead_letters_total'
          ) {
            for (const v of m.values) if (v.labels.type !== 'MalformedRequest') sum += v.value;
          }
        }
        return sum;
      };
      await until(
        `${n} records processed`,
        async () => ((await total()) >= n ? true : undefined),
        90_000,
      );
    };
    const garbage = { key: 'garbage', value: 'this is not an event' };

    await scrapes(2); // the counters at zero, before anything happened
    const codec = codecFor(c);
    await produceEvents(c, phase1, codec);
    await produceRaw(c, [garbage]);
    await processed(phase1.length + 1);
    await scrapes(3);
    await produceEvents(c, phase2, codec);
    await produceRaw(c, [garbage]);
    await processed(phase1.length + phase2.length + 2);
    await scrapes(3);

    // Every dashboard query: success and data.
    const dashboard = JSON.parse(
      readFileSync(path.join(ROOT, 'grafana/dashboards/compaction-guard.json'), 'utf8'),
    );
    const targets = dashboardTargets(dashboard);
    expect(targets.length).toBeGreaterThanOrEqual(20);
    for (const t of targets) {
      const expr = withIntervals(t.expr, INTERVAL);
      const r = await query(expr);
      expect([t.panel, expr, r.status, r.error]).toEqual([t.panel, expr, 'success', undefined]);
      expect([t.panel, expr, (r.data?.result.length ?? 0) > 0]).toEqual([t.panel, expr, true]);
    }

    // Every alert expression: the whole (success), its compared values and selectors (data).
    const rules = alertRules();
    expect(rules).toHaveLength(9);
    for (const rule of rules) {
      const whole = await query(rule.expr);
      expect([rule.alert, whole.status, whole.error]).toEqual([rule.alert, 'success', undefined]);
      for (const operand of valueOperands(rule.expr)) {
        const r = await query(operand);
        expect([rule.alert, operand, r.status]).toEqual([rule.alert, operand, 'success']);
        const expectData = !/^absent\(/.test(operand);
        expect([rule.alert, operand, (r.data?.result.length ?? 0) > 0]).toEqual([
          rule.alert,
          operand,
          expectData,
        ]);
      }
      for (const s of selectors(rule.expr)) {
        const r = await query(s.text);
        expect([rule.alert, s.text, (r.data?.result.length ?? 0) > 0]).toEqual([
          rule.alert,
          s.text,
          true,
        ]);
      }
    }

    // The alerts these events trip fire (no `for:`), and the processor is not reported down.
    const firing = await until(
      'the halts, dead-letter and committed-without-approval alerts',
      async () => {
        const res = (await (await fetch(`${api}/alerts`)).json()) as AlertsResult;
        const names = new Set(
          res.data.alerts.filter((a) => a.state === 'firing').map((a) => a.labels.alertname),
        );
        const want = [
          'CompactionGuardHalts',
          'CompactionGuardDeadLetters',
          'CompactionGuardCommittedWithoutApproval',
        ];
        return want.every((n) => names.has(n)) ? res.data.alerts : undefined;
      },
      30_000,
    );
    expect(firing.filter((a) => a.labels.alertname === 'CompactionGuardDown')).toEqual([]);
    for (const a of firing)
      expect([a.labels.alertname, a.labels.job]).toEqual([a.labels.alertname, JOB]);

    // The live exposition passes promtool's lint.
    const text = await (await fetch(metricsUrl)).text();
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (lint.error) {
      if (process.env.CI) throw lint.error;
      console.warn('SKIPPED: promtool not found; /metrics not linted');
    } else {
      expect(`${lint.stdout}${lint.stderr}`.trim()).toBe('');
      expect(lint.status).toBe(0);
    }
  });
});
