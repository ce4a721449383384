/**
 * Just enough PromQL lexing for the observability tests: which metrics an expression reads
 * (vector selectors with their matchers), and Grafana's interval variables replaced so that
 * promtool and Prometheus accept dashboard queries. Parsing proper is promtool's job.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { parse } from 'yaml';
import { Metrics } from '../../src/metrics/metrics';

export const ROOT = path.resolve(__dirname, '../..');

/** Words that are not metric names even when not followed by `(`. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);
/** Modifiers followed by a parenthesised label list (not a function call). */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

export interface Selector {
  metric: string;
  /** The selector as written, e.g. `up{job="compaction-guard"}`. */
  text: string;
}

/** The vector selectors of an expression, in order (repeats included). */
export function selectors(expr: string): Selector[] {
  const out: Selector[] = [];
  let i = 0;
  const skipSpaces = () => {
    while (i < expr.length && /\s/.test(expr[i]!)) i++;
  };
  /** From an opening bracket to its match, skipping quoted strings. */
  const skipGroup = (open: string, close: string): string => {
    const start = i;
    let depth = 0;
    for (; i < expr.length; i++) {
      const c = expr[i]!;
      if (c === '"' || c === "'" || c === '`') skipString();
      else if (c === open) depth++;
      else if (c === close && --depth === 0) {
        i++;
        return expr.slice(start, i);
      }
    }
    throw new Error(`unbalanced ${open} in ${expr}`);
  };
  const skipString = () => {
    const quote = expr[i]!;
    for (i++; i < expr.length && expr[i] !== quote; i++) if (expr[i] === '\\') i++;
  };
  while (i < expr.length) {
    const rest = expr.slice(i);
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      skipString();
      i++;
      continue;
    }
    if (c === '[') {
      skipGroup('[', ']');
      continue;
    }
    const duration = /^\d+(ms|[smhdwy])(?![\w:])/.exec(rest);
    const number = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?/i.exec(rest);
    if (duration || number) {
      i += (duration ?? number)![0].length;
      continue;
    }
    const ident = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(rest);
    if (ident) {
      const name = ident[0];
      i += name.length;
      skipSpaces();
      if (LABEL_LISTS.has(name)) {
        if (expr[i] === '(') skipGroup('(', ')');
        continue;
      }
      // A function call, an aggregation (`sum by (x) (...)`) or a keyword: not a metric.
      if (
        expr[i] === '(' ||
        /^(by|without)\s*\(/.test(expr.slice(i)) ||
        KEYWORDS.has(name.toLowerCase())
      ) {
        continue;
      }
      const matchers = expr[i] === '{' ? skipGroup('{', '}') : '';
      out.push({ metric: name, text: name + matchers });
      continue;
    }
    if (c === '{') throw new Error(`selectors without a metric name are not supported: ${expr}`);
    i++;
  }
  return out;
}

/** The metric names an expression reads, without repeats. */
export function metricNames(expr: string): string[] {
  return [...new Set(selectors(expr).map((s) => s.metric))];
}

/** Grafana's interval variables replaced by a fixed duration (promtool and Prometheus need one). */
export function withIntervals(expr: string, interval = '1m'): string {
  return expr.replace(
    /\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}/g,
    interval,
  );
}

/**
 * The series names the processor exports: every metric of src/metrics/metrics.ts and the Node
 * default metrics prom-client adds, histograms and summaries with their sample suffixes.
 */
export async function exportedSeriesNames(): Promise<Set<string>> {
  const registry = new Registry();
  new Metrics(registry);
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    names.add(m.name);
    const type = String(m.type);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function alertRules(file = path.join(ROOT, 'prometheus/alerts.yml')): AlertRule[] {
  const doc = parse(readFileSync(file, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

export interface DashboardTarget {
  panel: string;
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id?: number;
  type: string;
  title?: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: Omit<DashboardTarget, 'panel'>[];
  panels?: DashboardPanel[];
}

/** Every query of a dashboard JSON, rows' nested panels included. */
export function dashboardTargets(dashboard: { panels?: DashboardPanel[] }): DashboardTarget[] {
  const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ ...t, panel: p.title ?? `#${p.id}` })),
  );
}

export interface PromtoolResult {
  status: number | null;
  output: string;
}

/**
 * Runs promtool. A missing promtool fails the test that needs it, never skips it: a check
 * that passes without running proves nothing (.ci/run installs it).
 */
export function promtool(args: string[], input?: string): PromtoolResult {
  const r = spawnSync('promtool', args, { cwd: ROOT, input, encoding: 'utf8', timeout: 60_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new Error(
      `promtool not found on PATH: install the Debian package \`prometheus\` (.ci/run does); needed for promtool ${args.join(' ')}`,
    );
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
