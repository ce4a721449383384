/**
 * The Grafana dashboard as code (grafana/dashboard.ts) and its checked-in JSON: up to date,
 * valid for the Grafana Foundation SDK's types, structurally sound, and every query parses
 * (promtool) and reads only metrics the processor exports.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { stringify } from 'yaml';
import { DASHBOARD_PATH, dashboardJson } from '../../grafana/dashboard';
import {
  ROOT,
  dashboardTargets,
  exportedSeriesNames,
  metricNames,
  promtool,
  withIntervals,
  type DashboardPanel,
} from '../support/promql';

jest.setTimeout(60_000);

interface DashboardFile {
  uid?: string;
  templating: { list?: { type: string; name: string; query?: unknown }[] };
  panels?: DashboardPanel[];
}

const checkedIn = readFileSync(DASHBOARD_PATH, 'utf8');
const dashboard = JSON.parse(checkedIn) as DashboardFile;
const panels = dashboard.panels ?? [];
const queryPanels = panels.filter((p) => p.type !== 'row');
const targets = dashboardTargets(dashboard);

describe('grafana/dashboards/compaction-guard.json', () => {
  it('is what grafana/dashboard.ts generates (else run `npm run dashboard`)', () => {
    expect(checkedIn).toBe(dashboardJson());
  });

  describe("validates against the Grafana Foundation SDK's dashboard types", () => {
    // The SDK (0.0.21) ships no JSON schema and no decoders, only builders and TypeScript
    // types; so the JSON is type-checked, as an object literal, against the SDK's types
    // turned into JSON types (test/support/grafanaJson.ts) by the TypeScript compiler.
    const checkFile = path.join(ROOT, 'test/support/__dashboard-json-check__.ts');
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      lib: ['lib.es2022.d.ts'],
      types: [],
    };
    let previous: ts.Program | undefined;

    /** The compiler's errors for `json` as a DashboardJson literal. */
    function typeErrors(json: string): string[] {
      const source = `import type { DashboardJson } from './grafanaJson';\nexport const dashboard: DashboardJson = ${json};\n`;
      const host = ts.createCompilerHost(options);
      const { getSourceFile, fileExists, readFile } = host;
      host.getSourceFile = (name, version, ...rest) =>
        path.resolve(name) === checkFile
          ? ts.createSourceFile(name, source, version)
          : getSourceFile.call(host, name, version, ...rest);
      host.fileExists = (name) => path.resolve(name) === checkFile || fileExists.call(host, name);
      host.readFile = (name) =>
        path.resolve(name) === checkFile ? source : readFile.call(host, name);
      const program = ts.createProgram([checkFile], options, host, previous);
      previous = program;
      return ts.getPreEmitDiagnostics(program).map((d) => {
        const where =
          d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
        const at = where ? `${path.basename(d.file!.fileName)}:${where.line + 1}: ` : '';
        return at + ts.flattenDiagnosticMessageText(d.messageText, '\n');
      });
    }

    it('the checked-in JSON type-checks', () => {
      expect(typeErrors(checkedIn)).toEqual([]);
    });

    it('the check has teeth: a misspelt key, a bad enum value or a wrong type is an error', () => {
      const mutate = (f: (d: { panels: Record<string, unknown>[] }) => void) => {
        const d = JSON.parse(checkedIn) as { panels: Record<string, unknown>[] };
        f(d);
        return typeErrors(JSON.stringify(d, null, 2));
      };
      const firstTimeseries = (d: { panels: Record<string, unknown>[] }) =>
        d.panels.find((p) => p.type === 'timeseries') as {
          fieldConfig: { defaults: { custom: Record<string, unknown> } };
          gridPos: Record<string, unknown>;
          targets: Record<string, unknown>[];
        };
      expect(
        mutate((d) => (firstTimeseries(d).fieldConfig.defaults.custom.fillOpacitty = 10)),
      ).not.toEqual([]);
      expect(
        mutate((d) => (firstTimeseries(d).fieldConfig.defaults.custom.drawStyle = 'lines')),
      ).not.toEqual([]);
      expect(mutate((d) => (firstTimeseries(d).gridPos.h = '8'))).not.toEqual([]);
      expect(mutate((d) => (firstTimeseries(d).targets[0]!.expression = 'up'))).not.toEqual([]);
    });
  });

  it('has a Prometheus data source variable `datasource`', () => {
    expect(dashboard.uid).toBe('compaction-guard');
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ type: 'datasource', name: 'datasource', query: 'prometheus' }),
    );
  });

  it('has unique panel ids and non-overlapping positions on the 24-column grid', () => {
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id) && id! > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of panels) {
      const g = p.gridPos!;
      expect([p.title, [g.x, g.y, g.w, g.h].every((n) => Number.isInteger(n) && n >= 0)]).toEqual([
        p.title,
        true,
      ]);
      expect([p.title, g.w > 0 && g.h > 0 && g.x + g.w <= 24]).toEqual([p.title, true]);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect([p.title, cells.has(`${x},${y}`)]).toEqual([p.title, false]);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('every panel and query uses the `${datasource}` Prometheus data source and has an expr', () => {
    expect(queryPanels.length).toBeGreaterThanOrEqual(12);
    for (const p of queryPanels) {
      expect([p.title, p.datasource]).toEqual([
        p.title,
        { type: 'prometheus', uid: '${datasource}' },
      ]);
      expect([p.title, (p.targets ?? []).length > 0]).toEqual([p.title, true]);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
    }
    for (const t of targets) {
      expect([t.panel, t.datasource]).toEqual([
        t.panel,
        { type: 'prometheus', uid: '${datasource}' },
      ]);
      expect([t.panel, typeof t.expr === 'string' && t.expr.trim().length > 0]).toEqual([
        t.panel,
        true,
      ]);
    }
  });

  it('covers the issue: verdicts, refusals, spills/halts, latency, lag, throughput, sessions, DLQ, audit, transactions, rebalances, engine step', () => {
    const exprs = targets.map((t) => t.expr).join('\n');
    for (const needed of [
      /compaction_guard_verdicts_total\b.*by \(decision, action\)|by \(decision, action\).*compaction_guard_verdicts_total\b/,
      /by \(code\) \(rate\(compaction_guard_refusal_reasons_total\b/,
      /compaction_guard_spill_requests_total\b/,
      /compaction_guard_halts_total\b/,
      /histogram_quantile\(0\.5, .*compaction_guard_verdict_latency_seconds_bucket\b/,
      /histogram_quantile\(0\.99, .*compaction_guard_verdict_latency_seconds_bucket\b/,
      /by \(partition\) \(compaction_guard_consumer_lag_records\b/,
      /by \(type\) \(rate\(compaction_guard_events_total\b/,
      /compaction_guard_sessions_tracked\b/,
      /by \(code\) \(rate\(compaction_guard_dead_letters_total\b/,
      /by \(kind, code\) \(rate\(compaction_guard_audit_records_total\b/,
      /by \(outcome\) \(rate\(compaction_guard_transactions_total\b/,
      /compaction_guard_rebalances_total\b/,
      /compaction_guard_engine_step_duration_seconds_bucket\b/,
    ]) {
      expect([needed.source, needed.test(exprs)]).toEqual([needed.source, true]);
    }
  });

  it('every query reads only metrics the processor exports (src/metrics/metrics.ts, Node defaults)', async () => {
    const exported = await exportedSeriesNames();
    for (const t of targets) {
      const names = metricNames(t.expr);
      expect([t.expr, names.length > 0]).toEqual([t.expr, true]);
      for (const name of names)
        expect([t.expr, name, exported.has(name)]).toEqual([t.expr, name, true]);
    }
  });

  it('every query parses (promtool check rules on the queries as recording rules)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-dashboard-'));
    try {
      const file = path.join(dir, 'queries.yml');
      const rules = targets.map((t, i) => ({
        record: `dashboard:query:${i}`,
        expr: withIntervals(t.expr),
      }));
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules }] }));
      const r = promtool(['check', 'rules', file]);
      expect(r.output).toContain(`SUCCESS: ${rules.length} rules found`);
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
