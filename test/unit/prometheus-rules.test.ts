/**
 * prometheus/alerts.yml: promtool accepts the rules and the config that loads them, the rule
 * unit tests (prometheus/alerts.test.yml) pass and show every alert firing and not firing,
 * and every alert is labelled, annotated and linked to its runbook section.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  ROOT,
  alertRules,
  exportedSeriesNames,
  metricNames,
  promtool,
  selectors,
} from '../support/promql';

jest.setTimeout(60_000);

const ALERTS = [
  'CompactionGuardHalts',
  'CompactionGuardCommittedWithoutApproval',
  'CompactionGuardRefusalRatioHigh',
  'CompactionGuardDeadLetters',
  'CompactionGuardAtSessionCapacity',
  'CompactionGuardLagGrowing',
  'CompactionGuardDown',
  'CompactionGuardUnauthorizedEvents',
  'CompactionGuardKeyRingReloadFailed',
];

const rules = alertRules();

/** Runs promtool (failing when it is missing) and expects it to succeed. */
function run(args: string[]): string {
  const r = promtool(args);
  expect([`promtool ${args.join(' ')}`, r.status, r.output]).toEqual([
    `promtool ${args.join(' ')}`,
    0,
    r.output,
  ]);
  return r.output;
}

describe('prometheus/alerts.yml', () => {
  it('promtool check rules', () => {
    const out = run(['check', 'rules', 'prometheus/alerts.yml']);
    expect(out).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  it('promtool check config prometheus/prometheus.yml (which loads alerts.yml)', () => {
    const config = parse(readFileSync(path.join(ROOT, 'prometheus/prometheus.yml'), 'utf8')) as {
      rule_files?: string[];
    };
    expect(config.rule_files).toEqual(['alerts.yml']);
    const out = run(['check', 'config', 'prometheus/prometheus.yml']);
    expect(out).toContain('SUCCESS: 1 rule files found');
  });

  it('promtool test rules prometheus/alerts.test.yml', () => {
    const out = run(['test', 'rules', 'prometheus/alerts.test.yml']);
    expect(out).toContain('SUCCESS');
  });

  it('defines the nine alerts, each with a severity, a summary, a description and a runbook section', () => {
    expect(rules.map((r) => r.alert)).toEqual(ALERTS);
    const runbook = readFileSync(path.join(ROOT, 'prometheus/RUNBOOK.md'), 'utf8');
    const anchors = new Set([...runbook.matchAll(/^#+ (.+)$/gm)].map((m) => githubAnchor(m[1]!)));
    for (const r of rules) {
      expect([r.alert, ['page', 'ticket'].includes(r.labels?.severity ?? '')]).toEqual([
        r.alert,
        true,
      ]);
      expect([r.alert, Boolean(r.annotations?.summary && r.annotations.description)]).toEqual([
        r.alert,
        true,
      ]);
      const url = r.annotations?.runbook_url ?? '';
      expect(url).toBe(`prometheus/RUNBOOK.md#${r.alert.toLowerCase()}`);
      expect([url, anchors.has(url.split('#')[1]!)]).toEqual([url, true]);
    }
  });

  it('every alert is unit-tested both firing and not firing', () => {
    const doc = parse(readFileSync(path.join(ROOT, 'prometheus/alerts.test.yml'), 'utf8')) as {
      rule_files: string[];
      tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    expect(doc.rule_files).toEqual(['alerts.yml']);
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of ALERTS) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect([alert, 'firing', mine.some((c) => (c.exp_alerts ?? []).length > 0)]).toEqual([
        alert,
        'firing',
        true,
      ]);
      expect([alert, 'not firing', mine.some((c) => (c.exp_alerts ?? []).length === 0)]).toEqual([
        alert,
        'not firing',
        true,
      ]);
    }
  });

  it('alert expressions read only metrics the processor exports (and `up`)', async () => {
    const exported = await exportedSeriesNames();
    exported.add('up');
    for (const r of rules) {
      for (const name of metricNames(r.expr))
        expect([r.alert, name, exported.has(name)]).toEqual([r.alert, name, true]);
    }
  });
});

describe('the PromQL lexer of these tests (test/support/promql.ts)', () => {
  it('finds vector selectors, not functions, aggregations, label lists, keywords or numbers', () => {
    expect(
      selectors(
        'histogram_quantile(0.99, sum(rate(a_bucket{x="(y)"}[1m])) by (le)) / 2^30 > bool 1e-3 unless on (job) b offset 5m or absent(up{job="j"})',
      ).map((s) => s.text),
    ).toEqual(['a_bucket{x="(y)"}', 'b', 'up{job="j"}']);
    expect(metricNames('sum by (job, code) (increase(c_total[10m])) > 0')).toEqual(['c_total']);
    const cwa = rules.find((r) => r.alert === 'CompactionGuardCommittedWithoutApproval')!;
    expect(metricNames(cwa.expr)).toEqual(['compaction_guard_audit_records_total', 'up']);
  });
});

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
