// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient typings for the SDK subpaths (see the file); grafana/ is outside tsconfig include
/// <reference path="./foundation-sdk.d.ts" />
/**
 * The compaction-guard Grafana dashboard as code (Grafana Foundation SDK builders). Writes the
 * checked-in JSON that Grafana provisions from grafana/dashboards/ (see docker-compose.yml):
 *
 *   npm run dashboard
 *
 * test/unit/grafana-dashboard.test.ts fails when the JSON is stale, when a query does not parse
 * (promtool) or names a metric that src/metrics/metrics.ts does not define.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as common from '@grafana/grafana-foundation-sdk/common';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';

export const DASHBOARD_UID = 'compaction-guard';
export const DASHBOARD_PATH = path.join(__dirname, 'dashboards', 'compaction-guard.json');

/** Every panel and query reads the Prometheus data source the `datasource` variable selects. */
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
const RATE = '$__rate_interval';

interface Query {
  expr: string;
  legend: string;
}

const q = (expr: string, legend: string): Query => ({ expr, legend });

/** p50 and p99 of a histogram, from its buckets' per-second rates. */
const quantiles = (metric: string): Query[] =>
  [0.5, 0.99].map((quantile) =>
    q(
      `histogram_quantile(${quantile}, sum by (le) (rate(${metric}_bucket[${RATE}])))`,
      `p${Math.round(quantile * 100)}`,
    ),
  );

/** Per-second rate of a counter, summed by the given labels (none: one series). */
const rate = (metric: string, by: string[] = []): string =>
  by.length > 0
    ? `sum by (${by.join(', ')}) (rate(${metric}[${RATE}]))`
    : `sum(rate(${metric}[${RATE}]))`;

function targets(queries: Query[]): DataqueryBuilder[] {
  return queries.map((query, i) =>
    new DataqueryBuilder()
      .datasource(DATASOURCE)
      .refId(String.fromCharCode(65 + i))
      .expr(query.expr)
      .legendFormat(query.legend)
      .range(),
  );
}

interface PanelSpec {
  title: string;
  description: string;
  unit: string;
  queries: Query[];
  /** Grid width (of 24), default 12. */
  width?: number;
  bars?: boolean;
  stacked?: boolean;
}

function timeseriesPanel(id: number, spec: PanelSpec): timeseries.PanelBuilder {
  const panel = new timeseries.PanelBuilder()
    .id(id)
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .unit(spec.unit)
    .min(0)
    .height(8)
    .span(spec.width ?? 12)
    .fillOpacity(spec.bars || spec.stacked ? 60 : 10)
    .lineWidth(1)
    .drawStyle(spec.bars ? common.GraphDrawStyle.Bars : common.GraphDrawStyle.Line)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(common.SortOrder.Descending),
    )
    .targets(targets(spec.queries));
  if (spec.stacked) {
    panel.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
  }
  return panel;
}

function statPanel(id: number, spec: PanelSpec): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .id(id)
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .unit(spec.unit)
    .height(8)
    .span(spec.width ?? 12)
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.Area)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']))
    .thresholds(
      new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
        { value: null, color: 'red' },
        { value: 1, color: 'green' },
      ]),
    )
    .targets(targets(spec.queries));
}

const M = 'compaction_guard_';

export function buildDashboard(): Dashboard {
  let nextId = 1;
  const id = () => nextId++;
  const row = (title: string) => new RowBuilder(title).id(id());
  const ts = (spec: PanelSpec) => timeseriesPanel(id(), spec);

  return new DashboardBuilder('compaction-guard')
    .uid(DASHBOARD_UID)
    .description(
      'Verdicts, refusals, halts and the health of the compaction-guard stream processor (contract §5–§6).',
    )
    .tags(['compaction-guard', 'kafka', 'generated'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .refresh('30s')
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .withVariable(
      new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'),
    )

    .withRow(row('Verdicts'))
    .withPanel(
      ts({
        title: 'Verdicts by decision and action',
        description: 'Verdicts published per second (agent.compaction-verdicts).',
        unit: 'ops',
        stacked: true,
        queries: [q(rate(`${M}verdicts_total`, ['decision', 'action']), '{{decision}} {{action}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Refusal reasons',
        description: 'Rules that fired in REFUSE verdicts per second, by rule code (contract §5).',
        unit: 'ops',
        stacked: true,
        queries: [q(rate(`${M}refusal_reasons_total`, ['code']), '{{code}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Spill requests and halts',
        description:
          'Lossless-spill requests published, and REFUSE verdicts with action HALT (no spill can help: an operator must act).',
        unit: 'ops',
        queries: [
          q(rate(`${M}spill_requests_total`), 'spill requests'),
          q(rate(`${M}halts_total`), 'halts'),
        ],
      }),
    )
    .withPanel(
      ts({
        title: 'Verdict latency',
        description: "From the request's occurredAt to its verdict's transaction commit.",
        unit: 's',
        queries: quantiles(`${M}verdict_latency_seconds`),
      }),
    )

    .withRow(row('Input'))
    .withPanel(
      ts({
        title: 'Throughput by event type',
        description: 'Input events processed per second (MalformedRequest: answered dead letters).',
        unit: 'ops',
        stacked: true,
        queries: [q(rate(`${M}events_total`, ['type']), '{{type}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Consumer lag by partition',
        description:
          'Records behind the high watermark per input partition, after the last batch (max over instances: a partition that moved keeps its old gauge on the previous owner).',
        unit: 'short',
        queries: [q(`max by (partition) (${M}consumer_lag_records)`, 'partition {{partition}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Dead letters by code',
        description: 'Input records sent to agent.context-changes.dlq per second, by reason code.',
        unit: 'ops',
        bars: true,
        queries: [q(rate(`${M}dead_letters_total`, ['code']), '{{code}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Duplicates and gaps',
        description:
          'Redelivered events ignored (contract §4 step 1), and events that revealed a gap (lost or conflicting events: later requests of those sessions are refused EVENT_GAP).',
        unit: 'ops',
        queries: [
          q(rate(`${M}duplicate_events_total`), 'duplicates'),
          q(rate(`${M}gaps_total`), 'gaps'),
        ],
      }),
    )

    .withRow(row('Audit'))
    .withPanel(
      ts({
        title: 'Advisories and violations by code',
        description:
          'Records published to compaction-guard.audit per second. Any COMMITTED_WITHOUT_APPROVAL is a compaction the guard did not approve.',
        unit: 'ops',
        width: 24,
        bars: true,
        queries: [q(rate(`${M}audit_records_total`, ['kind', 'code']), '{{kind}} {{code}}')],
      }),
    )

    .withRow(row('Processor'))
    .withPanel(
      ts({
        title: 'Sessions tracked',
        description: 'Sessions held in memory, per instance.',
        unit: 'short',
        queries: [q(`sum by (instance) (${M}sessions_tracked)`, '{{instance}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Refused at the session cap',
        description:
          'Per instance at CG_MAX_SESSIONS: new sessions refused and their events not stored, per second (their requests are refused UNKNOWN_SESSION).',
        unit: 'ops',
        bars: true,
        queries: [
          q(
            `sum by (instance) (rate(${M}sessions_refused_at_capacity_total[${RATE}]))`,
            'sessions {{instance}}',
          ),
          q(
            `sum by (instance) (rate(${M}events_refused_at_capacity_total[${RATE}]))`,
            'events {{instance}}',
          ),
        ],
      }),
    )
    .withPanel(
      statPanel(id(), {
        title: 'Instances ready',
        description:
          'Instances that joined the group and restored all assigned state (/readyz), of those scraped.',
        unit: 'short',
        queries: [q(`sum(${M}ready)`, 'ready'), q(`count(${M}build_info)`, 'instances')],
      }),
    )
    .withPanel(
      ts({
        title: 'Transactions by outcome',
        description: 'Batch transactions per second, committed and aborted.',
        unit: 'ops',
        queries: [q(rate(`${M}transactions_total`, ['outcome']), '{{outcome}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Rebalances',
        description: 'Consumer group assignments received, per instance.',
        unit: 'short',
        bars: true,
        queries: [q(`sum by (instance) (increase(${M}rebalances_total[${RATE}]))`, '{{instance}}')],
      }),
    )
    .withPanel(
      ts({
        title: 'Engine step duration',
        description:
          'Mean time of one engine step (evolve, deciding requests) over a fetched batch; the quantiles are over batches.',
        unit: 's',
        queries: quantiles(`${M}engine_step_duration_seconds`),
      }),
    )
    .withRow(row('Node.js process'))
    .withPanel(
      ts({
        title: 'Process CPU',
        description: 'CPU time per second, per instance (1 = one core).',
        unit: 'percentunit',
        width: 8,
        queries: [
          q(`sum by (instance) (rate(process_cpu_seconds_total[${RATE}]))`, '{{instance}}'),
        ],
      }),
    )
    .withPanel(
      ts({
        title: 'Process memory',
        description: 'Resident set size and V8 heap used, per instance.',
        unit: 'bytes',
        width: 8,
        queries: [
          q('sum by (instance) (process_resident_memory_bytes)', 'RSS {{instance}}'),
          q('sum by (instance) (nodejs_heap_size_used_bytes)', 'heap used {{instance}}'),
        ],
      }),
    )
    .withPanel(
      ts({
        title: 'Event loop lag p99',
        description: 'Node.js event loop lag, 99th percentile, per instance.',
        unit: 's',
        width: 8,
        queries: [q('max by (instance) (nodejs_eventloop_lag_p99_seconds)', '{{instance}}')],
      }),
    )
    .build();
}

/** The dashboard as checked in: stable key order, two-space indent, final newline. */
export function dashboardJson(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}

if (require.main === module) {
  writeFileSync(DASHBOARD_PATH, dashboardJson());
  console.log(`wrote ${path.relative(process.cwd(), DASHBOARD_PATH)}`);
}
