/**
 * Prometheus metrics of the processor (prefix `compaction_guard_`, base units, `_total` on
 * counters, bounded label values: enums of the contract only). The registry is injected: tests
 * and several processors in one process each get their own.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Note, Output } from '../engine/collector';
import { ENGINE_VERSION } from '../engine/version';
import { KAFKA_DEAD_LETTER_CODES, type DeadLetterCode } from '../kafka/records';
import { DECODE_ERROR_CODES } from '../schema/errors';
import { AUDIT_KIND_OF, type AuditCode, type AuditKind } from '../engine/outputs';
import { RULE_CODES } from '../engine/rules';
import { EventTally, type ProcessorObserver } from '../kafka/processorObserver';
import type { KeyRingObserver } from '../authority/keyRingInForce';

const P = 'compaction_guard_';

/** Every audit code with its kind (contract §6), so both label sets start at 0. */
const AUDIT_CODES = Object.entries(AUDIT_KIND_OF) as [AuditCode, AuditKind][];

/**
 * The `version` of build_info: package.json's own, read at load (two levels up from both
 * src/metrics and dist/metrics; the Docker image ships it), so a release bump is one edit.
 */
export const PACKAGE_VERSION: string = readPackageVersion(
  path.resolve(__dirname, '../../package.json'),
);

export function readPackageVersion(file: string): string {
  const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
  if (typeof version !== 'string' || version === '')
    throw new Error(`${file}: expected a "version" string`);
  return version;
}

export class Metrics implements ProcessorObserver, KeyRingObserver {
  readonly verdicts: Counter<'decision' | 'action'>;
  readonly refusalReasons: Counter<'code'>;
  readonly spillRequests: Counter;
  readonly halts: Counter;
  readonly auditRecords: Counter<'kind' | 'code'>;
  readonly events: Counter<'type'>;
  readonly duplicates: Counter;
  readonly ignored: Counter<'type'>;
  readonly gaps: Counter;
  readonly deadLetters: Counter<'code'>;
  readonly decisionDuration: Histogram;
  readonly verdictLatency: Histogram;
  readonly consumerLag: Gauge<'partition'>;
  readonly sessionsTracked: Gauge;
  readonly restoreDuration: Histogram;
  readonly transactions: Counter<'outcome'>;
  readonly kafkaTransactions: Counter<'outcome'>;
  readonly rebalances: Counter;
  readonly transactionDuration: Histogram;
  readonly resyncs: Counter;
  readonly ready: Gauge;
  readonly sessionsRefusedAtCapacity: Counter;
  readonly eventsRefusedAtCapacity: Counter;
  readonly refusedFilterFill: Gauge;
  readonly unsignedAllowed: Gauge;
  readonly trustedKeys: Gauge;
  readonly keyRingReloads: Counter<'outcome'>;

  constructor(
    readonly registry: Registry,
    sessions: () => number = () => 0,
    /** The fullest refused-at-capacity filter's share of bits set (Processor.refusedFilterFill). */
    refusedFill: () => number = () => 0,
  ) {
    const registers = [registry];
    this.verdicts = new Counter({
      name: `${P}verdicts_total`,
      help: 'Verdicts published, by decision and action.',
      labelNames: ['decision', 'action'],
      registers,
    });
    this.refusalReasons = new Counter({
      name: `${P}refusal_reasons_total`,
      help: 'Rules that fired in REFUSE verdicts, by rule code (contract §5).',
      labelNames: ['code'],
      registers,
    });
    this.spillRequests = new Counter({
      name: `${P}spill_requests_total`,
      help: 'Lossless-spill requests published.',
      registers,
    });
    this.halts = new Counter({
      name: `${P}halts_total`,
      help: 'REFUSE verdicts with action HALT (no spill can help).',
      registers,
    });
    this.auditRecords = new Counter({
      name: `${P}audit_records_total`,
      help: 'Advisories and violations published, by kind and code.',
      labelNames: ['kind', 'code'],
      registers,
    });
    this.events = new Counter({
      name: `${P}events_total`,
      help: 'Input events processed, by event type (MalformedRequest: answered dead letters).',
      labelNames: ['type'],
      registers,
    });
    this.duplicates = new Counter({
      name: `${P}duplicate_events_total`,
      help: 'Redelivered events ignored (contract §4 step 1).',
      registers,
    });
    this.ignored = new Counter({
      name: `${P}ignored_events_total`,
      help: 'Events ignored by the rules (no policy, second SessionOpened, foreign SpillFailed), by type.',
      labelNames: ['type'],
      registers,
    });
    this.gaps = new Counter({
      name: `${P}gaps_total`,
      help: 'Events that revealed a gap (lost or conflicting events).',
      registers,
    });
    this.deadLetters = new Counter({
      name: `${P}dead_letters_total`,
      help: 'Input records sent to the DLQ, by reason code.',
      labelNames: ['code'],
      registers,
    });
    this.decisionDuration = new Histogram({
      name: `${P}engine_step_duration_seconds`,
      help: 'Mean time of one engine step (evolve, deciding requests) over a fetched batch; one observation per batch.',
      buckets: [1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3],
      registers,
    });
    this.verdictLatency = new Histogram({
      name: `${P}verdict_latency_seconds`,
      help: "From the request's occurredAt to its verdict's transaction commit.",
      buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.consumerLag = new Gauge({
      name: `${P}consumer_lag_records`,
      help: 'Records behind the high watermark, per input partition, after the last batch.',
      labelNames: ['partition'],
      registers,
    });
    this.sessionsTracked = new Gauge({
      name: `${P}sessions_tracked`,
      help: 'Sessions held in memory by this instance.',
      registers,
      collect() {
        this.set(sessions());
      },
    });
    this.restoreDuration = new Histogram({
      name: `${P}state_restore_duration_seconds`,
      help: 'Time to restore assigned partitions from the changelog.',
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    });
    this.transactions = new Counter({
      name: `${P}transactions_total`,
      help: 'Batch transactions, by outcome (committed, aborted).',
      labelNames: ['outcome'],
      registers,
    });
    this.kafkaTransactions = new Counter({
      name: `${P}kafka_transactions_total`,
      help: "Transactions of the processor's producers, by outcome: one per batch transaction with CG_KAFKA_CLIENT=kafkajs (a producer per partition), one per group of them with platformatic (one per process); barriers included.",
      labelNames: ['outcome'],
      registers,
    });
    this.rebalances = new Counter({
      name: `${P}rebalances_total`,
      help: 'Consumer group assignments received.',
      registers,
    });
    this.transactionDuration = new Histogram({
      name: `${P}transaction_duration_seconds`,
      help: "A committed transaction, from its plan's start to its commit (bounded by CG_TRANSACTION_BUDGET_MS / _BYTES).",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.resyncs = new Counter({
      name: `${P}resyncs_total`,
      help: 'Partitions resynchronised from Kafka (a transaction outcome unknown, a fenced producer, a consumer crash).',
      registers,
    });
    this.ready = new Gauge({
      name: `${P}ready`,
      help: '1 when the group is joined and all assigned state restored.',
      registers,
    });
    this.sessionsRefusedAtCapacity = new Counter({
      name: `${P}sessions_refused_at_capacity_total`,
      help: 'Sessions refused because the instance held CG_MAX_SESSIONS sessions (each counted once, when it first joins the refused filter).',
      registers,
    });
    this.eventsRefusedAtCapacity = new Counter({
      name: `${P}events_refused_at_capacity_total`,
      help: 'Events of sessions not held, counted and not stored because the instance was at CG_MAX_SESSIONS.',
      registers,
    });
    this.refusedFilterFill = new Gauge({
      name: `${P}refused_filter_fill_ratio`,
      help: "Share of bits set in the fullest partition's filter of sessions refused at capacity or freed by wall clock; about its 8th power of new sessions start blind by mistake.",
      registers,
      collect() {
        this.set(refusedFill());
      },
    });
    this.unsignedAllowed = new Gauge({
      name: `${P}unsigned_allowed`,
      help: '1 when running without a trusted key ring under CG_ALLOW_UNSIGNED=true: unsigned acknowledgements and spill answers are applied (contract §4b).',
      registers,
    });
    this.trustedKeys = new Gauge({
      name: `${P}trusted_keys`,
      help: 'Keys in the trusted key ring in force (0 without one).',
      registers,
    });
    this.keyRingReloads = new Counter({
      name: `${P}key_ring_reloads_total`,
      help: 'Re-reads of CG_TRUSTED_KEYS_FILE (SIGHUP), by outcome (loaded; failed: the keys in force stay).',
      labelNames: ['outcome'],
      registers,
    });
    const info = new Gauge({
      name: `${P}build_info`,
      help: 'Build information (value 1).',
      labelNames: ['version', 'engine_version', 'node_version'],
      registers,
    });
    info.set(
      { version: PACKAGE_VERSION, engine_version: ENGINE_VERSION, node_version: process.version },
      1,
    );
    this.initializeSeries();
    collectDefaultMetrics({ register: registry });
    // prom-client also exports these counts as gauges named `*_total`, which breaks Prometheus
    // naming (promtool: non-counter metrics should not have "_total" suffix); the same values
    // stay available as nodejs_active_handles, nodejs_active_requests, nodejs_active_resources.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      registry.removeSingleMetric(name);
    }
  }

  /**
   * Every label value of the closed code sets starts at 0, so the first refusal, dead letter or
   * violation is an increase Prometheus can see (a series born at 1 has no increase).
   */
  private initializeSeries(): void {
    for (const [decision, action] of [
      ['APPROVE', 'NONE'],
      ['REFUSE', 'SPILL'],
      ['REFUSE', 'HALT'],
    ]) {
      this.verdicts.inc({ decision, action }, 0);
    }
    for (const code of RULE_CODES) this.refusalReasons.inc({ code }, 0);
    for (const [code, kind] of AUDIT_CODES) this.auditRecords.inc({ kind, code }, 0);
    for (const code of [...DECODE_ERROR_CODES, ...KAFKA_DEAD_LETTER_CODES])
      this.deadLetters.inc({ code }, 0);
    for (const outcome of ['committed', 'aborted']) {
      this.transactions.inc({ outcome }, 0);
      this.kafkaTransactions.inc({ outcome }, 0);
    }
    for (const outcome of ['loaded', 'failed']) this.keyRingReloads.inc({ outcome }, 0);
  }

  /** One event (tests, offline use); the processor reports a batch at a time (`batchEvents`). */
  event(type: string, notes: readonly Note[]): void {
    const tally = new EventTally();
    tally.add(type, notes);
    this.batchEvents(tally);
  }

  batchEvents(t: EventTally): void {
    for (const [type, n] of t.byType) this.events.inc({ type }, n);
    if (t.duplicates > 0) this.duplicates.inc(t.duplicates);
    for (const [type, n] of t.ignoredByType) this.ignored.inc({ type }, n);
    if (t.gaps > 0) this.gaps.inc(t.gaps);
  }

  output(o: Output, latencyMs: number | null): void {
    switch (o.record) {
      case 'verdict':
        this.verdicts.inc({ decision: o.value.decision, action: o.value.action });
        if (o.value.action === 'HALT') this.halts.inc();
        for (const r of o.value.decision === 'REFUSE' ? o.value.reasons : [])
          this.refusalReasons.inc({ code: r.code });
        if (latencyMs !== null && latencyMs >= 0) this.verdictLatency.observe(latencyMs / 1000);
        break;
      case 'spill-request':
        this.spillRequests.inc();
        break;
      case 'audit':
        this.auditRecords.inc({ kind: o.value.kind, code: o.value.code });
        break;
    }
  }

  deadLetter(code: DeadLetterCode): void {
    this.deadLetters.inc({ code });
  }

  transaction(outcome: 'committed' | 'aborted', _records?: number, seconds?: number): void {
    this.transactions.inc({ outcome });
    if (seconds !== undefined) this.transactionDuration.observe(seconds);
  }

  kafkaTransaction(outcome: 'committed' | 'aborted'): void {
    this.kafkaTransactions.inc({ outcome });
  }

  resync(): void {
    this.resyncs.inc();
  }

  /** The batch's mean step time: per-step observations cost more than the steps' own metrics. */
  engineSteps(steps: number, seconds: number): void {
    if (steps > 0) this.decisionDuration.observe(seconds / steps);
  }

  rebalance(): void {
    this.rebalances.inc();
  }

  restored(seconds: number): void {
    this.restoreDuration.observe(seconds);
  }

  refusedAtCapacity(sessions: number, events: number): void {
    if (sessions > 0) this.sessionsRefusedAtCapacity.inc(sessions);
    if (events > 0) this.eventsRefusedAtCapacity.inc(events);
  }

  lag(partition: number, records: number): void {
    this.consumerLag.set({ partition: String(partition) }, records);
  }

  readiness(ready: boolean): void {
    this.ready.set(ready ? 1 : 0);
  }

  keyRing(keys: number | null): void {
    this.unsignedAllowed.set(keys === null ? 1 : 0);
    this.trustedKeys.set(keys ?? 0);
  }

  keyRingReload(outcome: 'loaded' | 'failed'): void {
    this.keyRingReloads.inc({ outcome });
  }
}
