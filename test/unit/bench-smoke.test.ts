/** The engine benchmark's code works and gives sane numbers (bench/engine.ts --quick sizes). */
import { QUICK, formatReport, runBench, stats } from '../../bench/engine';

describe('bench/engine --quick', () => {
  const result = runBench(QUICK);

  it('times the whole stream: positive, finite throughput and one verdict per request', () => {
    const { stream, fleet } = result;
    expect(stream.runsMs).toHaveLength(QUICK.runs);
    for (const t of [...stream.runsMs, ...stream.materializeMs]) {
      expect(t.cpu).toBeGreaterThan(0);
      expect(t.wall).toBeGreaterThan(0);
    }
    // Materializing the events is a small part of a run; the engine-only figure is the faster one.
    expect(stats(stream.materializeMs.map((t) => t.cpu)).median).toBeLessThan(
      stream.runsMs[1]!.cpu,
    );
    expect(stream.engineOnlyEventsPerSec).toBeGreaterThan(stream.eventsPerSec.median);
    // The engine timed alone, events handed over in blocks: one timing per run, all positive.
    expect(stream.blockRunsMs).toHaveLength(QUICK.runs);
    for (const t of stream.blockRunsMs) expect(t.cpu).toBeGreaterThan(0);
    expect(stream.blockEventsPerSec.median).toBeGreaterThan(1_000);
    expect(stream.blockEventsPerSec.min).toBeLessThanOrEqual(stream.blockEventsPerSec.max);
    expect(stream.wall.eventsPerSec.median).toBeGreaterThan(1_000);
    expect(Number.isFinite(stream.eventsPerSec.median)).toBe(true);
    expect(stream.eventsPerSec.median).toBeGreaterThan(1_000);
    expect(stream.eventsPerSec.min).toBeLessThanOrEqual(stream.eventsPerSec.max);
    const total = Object.values(fleet.byType).reduce((a, b) => a + b, 0);
    expect(total).toBe(QUICK.events);
    expect(fleet.requests).toBeGreaterThan(100);
    // decisions/s is events/s scaled by the share of requests.
    expect(stream.decisionsPerSec.median / stream.eventsPerSec.median).toBeCloseTo(
      fleet.requests / QUICK.events,
      6,
    );
  });

  it('compares a decision with the seed baseline on the same requests', () => {
    const d = result.decision;
    expect(d.requests).toBe(result.fleet.requests);
    expect(d.productNs.median).toBeGreaterThan(0);
    expect(d.baselineNs.median).toBeGreaterThan(0);
    expect(d.ratio).toBeCloseTo(d.productNs.median / d.baselineNs.median, 9);
    expect(Number.isFinite(d.ratio)).toBe(true);
    // Faulty sessions are refused by both; the engine refuses more (contract §5, conformance).
    expect(d.productRefusals).toBeGreaterThan(0);
    expect(d.baselineRefusals).toBeGreaterThan(0);
    expect(d.productRefusals).toBeLessThan(d.requests);
  });

  it('measures state sizes: the typical session under 1 KiB, median ≤ p99 ≤ max', () => {
    const s = result.stateBytes;
    expect(s.typicalEvents).toBe(211);
    expect(s.typical).toBeGreaterThan(100);
    expect(s.typical).toBeLessThanOrEqual(1024);
    expect(s.fleet.sessions).toBe(result.fleet.sessions);
    expect(s.fleet.median).toBeGreaterThan(20);
    expect(s.fleet.median).toBeLessThanOrEqual(s.fleet.p99);
    expect(s.fleet.p99).toBeLessThanOrEqual(s.fleet.max);
    // Without --expose-gc (as under jest) there is no heap figure.
    if (result.heap === null) expect(result.machine.gcExposed).toBe(false);
    else expect(result.heap.bytesPerSession).toBeGreaterThan(0);
  });

  it('formats a report with the table', () => {
    const text = formatReport(result);
    expect(text).toContain('| events/s');
    expect(text).toContain('ratio engine/baseline per decision');
    expect(text).not.toContain('NaN');
  });

  it('computes median, min, max and spread', () => {
    expect(stats([3, 1, 2, 10])).toEqual({ median: 2.5, min: 1, max: 10, spread: 9 / 2.5 });
    expect(stats([5])).toEqual({ median: 5, min: 5, max: 5, spread: 0 });
  });
});
