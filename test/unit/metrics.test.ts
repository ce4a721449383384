import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { Metrics, PACKAGE_VERSION, readPackageVersion } from '../../src/metrics/metrics';
import { Fleet } from '../../src/engine';
import { haltThenAcknowledgeExample } from '../support/examples';

function feed(metrics: Metrics): void {
  const fleet = new Fleet();
  for (const e of haltThenAcknowledgeExample()) {
    const r = fleet.process(e, e.occurredAt);
    metrics.event(e.type, r.notes);
    for (const o of r.outputs) metrics.output(o, 12);
  }
  metrics.deadLetter('NOT_JSON');
  metrics.transaction('committed');
  metrics.lag(0, 5);
}

describe('metrics', () => {
  it('count verdicts by decision/action, refusal reasons, halts, audits, events and dead letters', async () => {
    const registry = new Registry();
    const metrics = new Metrics(registry, () => 7);
    feed(metrics);
    const text = await registry.metrics();
    expect(text).toContain('compaction_guard_verdicts_total{decision="REFUSE",action="HALT"} 1');
    expect(text).toContain('compaction_guard_verdicts_total{decision="APPROVE",action="NONE"} 1');
    expect(text).toContain('compaction_guard_halts_total 1');
    expect(text).toContain('compaction_guard_refusal_reasons_total{code="EVICTED_PINNED"} 1');
    expect(text).toContain(
      'compaction_guard_audit_records_total{kind="ADVISORY",code="LOSS_ACKNOWLEDGED"} 1',
    );
    expect(text).toContain('compaction_guard_events_total{type="TurnAppended"} 32');
    expect(text).toContain('compaction_guard_dead_letters_total{code="NOT_JSON"} 1');
    expect(text).toContain('compaction_guard_sessions_tracked 7');
    expect(text).toContain('compaction_guard_consumer_lag_records{partition="0"} 5');
    expect(text).toMatch(
      /compaction_guard_build_info\{version="[^"]+",engine_version="[^"]+",node_version="v\d+/,
    );
  });

  it('count sessions and events refused at capacity, and show the refused filter fill', async () => {
    const registry = new Registry();
    const metrics = new Metrics(
      registry,
      () => 7,
      () => 0.25,
    );
    expect(await registry.metrics()).toContain(
      'compaction_guard_sessions_refused_at_capacity_total 0',
    );
    metrics.refusedAtCapacity(2, 5);
    metrics.refusedAtCapacity(0, 3);
    const text = await registry.metrics();
    expect(text).toContain('compaction_guard_sessions_refused_at_capacity_total 2');
    expect(text).toContain('compaction_guard_events_refused_at_capacity_total 8');
    expect(text).toContain('compaction_guard_refused_filter_fill_ratio 0.25');
  });

  it("build_info's version is package.json's, whatever it is", async () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    const registry = new Registry();
    new Metrics(registry);
    const text = await registry.metrics();
    expect(text).toContain(`compaction_guard_build_info{version="${pkg.version}",`);
    expect(PACKAGE_VERSION).toBe(pkg.version);
  });

  it('reads the version a package.json holds, and refuses one without a version', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-pkg-'));
    const file = path.join(dir, 'package.json');
    writeFileSync(file, JSON.stringify({ name: 'x', version: '9.8.7' }));
    expect(readPackageVersion(file)).toBe('9.8.7');
    writeFileSync(file, JSON.stringify({ name: 'x' }));
    expect(() => readPackageVersion(file)).toThrow(`${file}: expected a "version" string`);
  });

  it('registries are injected: two Metrics never share counters', async () => {
    const a = new Registry();
    const b = new Registry();
    feed(new Metrics(a));
    new Metrics(b);
    expect(await a.metrics()).toContain('compaction_guard_halts_total 1');
    expect(await b.metrics()).toContain('compaction_guard_halts_total 0');
  });

  it('closed code sets start at 0, so the first dead letter or violation is a visible increase', async () => {
    const registry = new Registry();
    new Metrics(registry);
    const text = await registry.metrics();
    expect(text).toContain('compaction_guard_dead_letters_total{code="NOT_JSON"} 0');
    expect(text).toContain('compaction_guard_dead_letters_total{code="KEY_MISMATCH"} 0');
    expect(text).toContain(
      'compaction_guard_audit_records_total{kind="VIOLATION",code="COMMITTED_WITHOUT_APPROVAL"} 0',
    );
    expect(text).toContain('compaction_guard_refusal_reasons_total{code="EVICTED_UNCOVERED"} 0');
    expect(text).toContain('compaction_guard_verdicts_total{decision="REFUSE",action="HALT"} 0');
  });

  it('the exposition passes `promtool check metrics` with no complaint', async () => {
    const registry = new Registry();
    feed(new Metrics(registry));
    const text = await registry.metrics();
    let out: string;
    try {
      out = execFileSync('promtool', ['check', 'metrics'], {
        input: text,
        stdio: ['pipe', 'pipe', 'pipe'],
      }).toString();
    } catch (e) {
      const err = e as { code?: string; stdout?: Buffer; stderr?: Buffer };
      if (err.code === 'ENOENT')
        throw new Error('promtool is required (Debian package prometheus; .ci/run installs it)');
      throw new Error(
        `promtool check metrics failed: ${err.stdout?.toString()} ${err.stderr?.toString()}`,
      );
    }
    expect(out.trim()).toBe('');
  });
});
