/**
 * Engine benchmark (not a test): a synthetic fleet (src/sim) is generated first, then timed on
 * one thread through the product's path (`SessionsInPlace`: owned states in a Map, each event
 * through `evolveInPlace`, as `audit` and the processor run it) and, alternating, through the
 * turn-arena experiment (`OwnedFleet`, bench/arena/, not the product: docs/decisions.md 64). Also: the cost of one decision against the seed's
 * stateless `assert_compaction_safe` on the same requests, serialized state size per session,
 * and heap per tracked session. See bench/README.md for the commands and the results.
 *
 *   npm run bench:engine                  # full size (20k sessions, 2M events, 5 runs)
 *   npm run bench:engine -- --quick       # tiny sizes, seconds
 *   npm run bench:engine -- --json        # the result as JSON
 */
import * as fs from 'fs';
import * as os from 'os';
import {
  type CompactionRequested,
  type ContextEvent,
  Fleet,
  type SessionState,
  type Unit,
  type Output,
  type Verdict,
  engineOptions,
  evolve,
  serializeState,
} from '../src/engine';
import { SessionsInPlace } from '../src/audit/replay';
import { OwnedFleet } from './arena/ownedFleet';
import { type PackedEvents, generateFleetPacked } from './packed';
import { type TruncationLog, assertCompactionSafe } from './baseline';
import { typicalSession } from './typical';
import { parseBenchArgs } from './args';

export interface BenchOptions {
  sessions: number;
  events: number;
  seed: number;
  /** Timed passes over the whole stream; the first is a warm-up, left out of the medians. */
  runs: number;
  faultyShare: number;
  /** Timed passes over the captured requests (product and baseline each), after a warm-up pass. */
  decisionRounds: number;
  /** Minimum duration of one decision round, ms (short loops are repeated to reach it). */
  minRoundMs: number;
}

export const FULL: BenchOptions = {
  sessions: 20_000,
  events: 2_000_000,
  seed: 20_261_202,
  runs: 5,
  faultyShare: 0.1,
  decisionRounds: 5,
  minRoundMs: 300,
};

export const QUICK: BenchOptions = {
  sessions: 200,
  events: 20_000,
  seed: 20_261_202,
  runs: 2,
  faultyShare: 0.2,
  decisionRounds: 2,
  minRoundMs: 20,
};

export interface Stats {
  median: number;
  min: number;
  max: number;
  /** (max − min) / median */
  spread: number;
}

export interface BenchResult {
  date: string;
  machine: {
    cpuModel: string;
    cpus: number;
    /** Cpus_allowed_list of this process (Linux), e.g. "0" when pinned with taskset. */
    cpusAllowed: string | null;
    node: string;
    totalMemGiB: number;
    loadAvgBefore: number[];
    loadAvgAfter: number[];
    gcExposed: boolean;
  };
  options: BenchOptions;
  fleet: {
    events: number;
    sessions: number;
    byType: Record<string, number>;
    requests: number;
    generateMs: number;
  };
  /**
   * Throughputs are per second of CPU time of this process (user + system, GC threads
   * included: what one core would need for all the work; robust to other processes on a
   * shared machine), and, as `wall`, per second of wall-clock time.
   */
  stream: {
    /** Every run, warm-up first: materializing each event and `OwnedFleet.process` (bench/arena). */
    runsMs: Timing[];
    eventsPerSec: Stats;
    decisionsPerSec: Stats;
    /** Materializing the events alone (no engine), after a warm-up. */
    materializeMs: Timing[];
    /** Events / (median run − median materialization): the engine's share. */
    engineOnlyEventsPerSec: number;
    /** Every run, warm-up first: `OwnedFleet.process` (bench/arena) timed alone, events handed over in blocks. */
    blockRunsMs: Timing[];
    /** Events / time of `blockRunsMs`: the engine alone, measured rather than subtracted. */
    blockEventsPerSec: Stats;
    wall: {
      eventsPerSec: Stats;
      decisionsPerSec: Stats;
      engineOnlyEventsPerSec: number;
      blockEventsPerSec: Stats;
    };
    /**
     * The product's path: the same stream through `SessionsInPlace` (a Map of owned states,
     * `evolveInPlace`, no turn arena), alternating with the arena's runs; `speedup` is its
     * median CPU time ÷ the arena's.
     */
    noArena: { runsMs: Timing[]; eventsPerSec: Stats; wallEventsPerSec: number; speedup: number };
  };
  decision: {
    requests: number;
    productNs: Stats;
    baselineNs: Stats;
    /** product ns per decision ÷ baseline ns per decision (medians). */
    ratio: number;
    wall: { productNs: Stats; baselineNs: Stats; ratio: number };
    productRefusals: number;
    baselineRefusals: number;
    /** Requests the baseline refuses and the engine approves (spills and acknowledgements heal). */
    baselineOnlyRefusals: number;
  };
  stateBytes: {
    typical: number;
    typicalEvents: number;
    fleet: {
      sessions: number;
      median: number;
      p99: number;
      max: number;
      mean: number;
      over1KiB: number;
    };
  };
  /**
   * heapUsed per session of the product's path (`SessionsInPlace`); and what the arena
   * experiment would add (its typed arrays, outside the JS heap, a page of 1,024 sessions at a
   * time) per session.
   */
  heap: { bytesPerSession: number; arenaBytesPerSession: number; sessions: number } | null;
}

/** A duration in ms, by CPU time of this process and by wall clock. */
export interface Timing {
  cpu: number;
  wall: number;
}

function clock(): Timing {
  const c = process.cpuUsage();
  return { cpu: (c.user + c.system) / 1000, wall: Number(process.hrtime.bigint()) / 1e6 };
}

function since(t0: Timing): Timing {
  const t = clock();
  return { cpu: t.cpu - t0.cpu, wall: t.wall - t0.wall };
}

export function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
  const min = s[0] ?? NaN;
  const max = s[n - 1] ?? NaN;
  return { median, min, max, spread: (max - min) / median };
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

function cpusAllowed(): string | null {
  try {
    const m = /^Cpus_allowed_list:\s*(.+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? m[1]!.trim() : null;
  } catch {
    return null;
  }
}

/** What a timed pass needs of a fleet. */
interface StreamFleet {
  process(e: ContextEvent, decidedAt: number): { outputs: readonly Output[] };
}

/**
 * One timed pass of the whole stream through a fresh fleet (decidedAt = occurredAt, as
 * offline). Each event is materialized from the packed stream just before it is processed,
 * as a consumer's decoder would hand it over.
 */
function timeStream(events: PackedEvents, fleet: StreamFleet): { ms: Timing; verdicts: number } {
  let verdicts = 0;
  const n = events.length;
  const t0 = clock();
  for (let i = 0; i < n; i++) {
    const e = events.get(i);
    const r = fleet.process(e, e.occurredAt);
    if (r.outputs.length > 0) for (const o of r.outputs) if (o.record === 'verdict') verdicts++;
  }
  return { ms: since(t0), verdicts };
}

/** Events per block of `timeBlocks`: ~1 MB of event objects, young when the engine gets them. */
export const BLOCK = 4096;

/**
 * One pass of the whole stream through a fresh fleet, timing the engine alone: the events are
 * materialized a block at a time outside the timed sections, as a consumer hands a decoded
 * batch to the engine, and only the loops over `fleet.process` are timed (a GC that the
 * materializing triggers runs outside them; one the engine triggers runs inside).
 */
function timeBlocks(events: PackedEvents, fleet: StreamFleet): { ms: Timing; verdicts: number } {
  let verdicts = 0;
  const n = events.length;
  const block: ContextEvent[] = new Array<ContextEvent>(BLOCK);
  const ms: Timing = { cpu: 0, wall: 0 };
  for (let from = 0; from < n; from += BLOCK) {
    const size = Math.min(BLOCK, n - from);
    for (let j = 0; j < size; j++) block[j] = events.get(from + j);
    const t0 = clock();
    for (let j = 0; j < size; j++) {
      const e = block[j]!;
      const r = fleet.process(e, e.occurredAt);
      if (r.outputs.length > 0) for (const o of r.outputs) if (o.record === 'verdict') verdicts++;
    }
    const t = since(t0);
    ms.cpu += t.cpu;
    ms.wall += t.wall;
  }
  return { ms, verdicts };
}

/** The same pass without the engine: what materializing the events costs. */
function timeMaterialize(events: PackedEvents): { ms: Timing; sink: number } {
  let sink = 0;
  const n = events.length;
  const t0 = clock();
  for (let i = 0; i < n; i++) sink += events.get(i).occurredAt;
  return { ms: since(t0), sink };
}

interface Captured {
  /** Each request with the state of its session just before it. */
  requests: { state: SessionState | undefined; event: CompactionRequested }[];
  /** The baseline's inputs for the same requests. */
  baseline: {
    sIn: number;
    t: number;
    f: number;
    log: TruncationLog;
    floorUnit: Unit;
    truncatorUnit: Unit;
  }[];
  verdicts: Verdict[];
  fleet: Fleet;
}

/** An untimed pass keeping what the decision benchmark and the state sizes need. */
function capture(events: PackedEvents): Captured {
  const fleet = new Fleet();
  const logs = new Map<string, [number, number][]>();
  const policies = new Map<string, { f: number; floorUnit: Unit; truncatorUnit: Unit }>();
  const out: Captured = { requests: [], baseline: [], verdicts: [], fleet };
  for (let i = 0; i < events.length; i++) {
    const e = events.get(i);
    if (e.type === 'SessionOpened') {
      const p = e.policy;
      policies.set(e.sessionId, {
        f: p.floor.span,
        floorUnit: p.floor.unit,
        truncatorUnit: p.truncatorUnit,
      });
      logs.set(e.sessionId, []);
    } else if (e.type === 'Truncated') {
      logs.get(e.sessionId)?.push([e.range.start, e.range.end]);
    } else if (e.type === 'CompactionRequested') {
      const p = policies.get(e.sessionId)!;
      out.requests.push({ state: fleet.get(e.sessionId), event: e });
      out.baseline.push({
        sIn: e.summaryInput.start,
        t: e.tailStart,
        f: p.f,
        log: logs.get(e.sessionId)!.slice(),
        floorUnit: p.floorUnit,
        truncatorUnit: p.truncatorUnit,
      });
    }
    for (const o of fleet.process(e, e.occurredAt).outputs) {
      if (o.record === 'verdict') out.verdicts.push(o.value);
    }
  }
  return out;
}

/** Runs `body` (one pass over n items) often enough to last minMs; returns ns per item. */
function nsPerItem(n: number, minMs: number, body: () => number): { ns: Timing; sink: number } {
  let reps = 0;
  let sink = 0;
  const t0 = clock();
  let elapsed: Timing;
  // Read the clock only every `batch` bodies, growing the batch until a check spans ≥ 1 ms:
  // a short body (the baseline: ~50 ns × a few thousand) would otherwise time the clock too.
  let batch = 1;
  let lastCheck = 0;
  do {
    for (let k = 0; k < batch; k++) sink += body();
    reps += batch;
    elapsed = since(t0);
    if (elapsed.wall - lastCheck < 1) batch *= 2;
    lastCheck = elapsed.wall;
  } while (elapsed.wall < minMs);
  const per = 1e6 / (reps * n);
  return { ns: { cpu: elapsed.cpu * per, wall: elapsed.wall * per }, sink };
}

function benchDecisions(c: Captured, o: BenchOptions): BenchResult['decision'] {
  const options = engineOptions();
  const requests = c.requests;
  const calls = c.baseline;
  const product = (): number => {
    let refusals = 0;
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]!;
      const out = evolve(r.state, r.event, r.event.occurredAt, options).outputs;
      for (const x of out) if (x.record === 'verdict' && x.value.decision === 'REFUSE') refusals++;
    }
    return refusals;
  };
  const baseline = (): number => {
    let refusals = 0;
    for (let i = 0; i < calls.length; i++) {
      const b = calls[i]!;
      if (assertCompactionSafe(b.sIn, b.t, b.f, b.log, b.floorUnit, b.truncatorUnit) !== null)
        refusals++;
    }
    return refusals;
  };
  const productNs: Timing[] = [];
  const baselineNs: Timing[] = [];
  // Round 0 warms both loops up (JIT) and is left out.
  for (let round = 0; round <= o.decisionRounds; round++) {
    gc();
    const p = nsPerItem(requests.length, o.minRoundMs, product).ns;
    const b = nsPerItem(calls.length, o.minRoundMs, baseline).ns;
    if (round === 0) continue;
    productNs.push(p);
    baselineNs.push(b);
  }
  let productRefusals = 0;
  let baselineRefusals = 0;
  let baselineOnly = 0;
  for (let i = 0; i < calls.length; i++) {
    const b = calls[i]!;
    const refusedByBaseline =
      assertCompactionSafe(b.sIn, b.t, b.f, b.log, b.floorUnit, b.truncatorUnit) !== null;
    const refusedByProduct = c.verdicts[i]!.decision === 'REFUSE';
    if (refusedByBaseline) baselineRefusals++;
    if (refusedByProduct) productRefusals++;
    if (refusedByBaseline && !refusedByProduct) baselineOnly++;
  }
  const p = stats(productNs.map((x) => x.cpu));
  const b = stats(baselineNs.map((x) => x.cpu));
  const pw = stats(productNs.map((x) => x.wall));
  const bw = stats(baselineNs.map((x) => x.wall));
  return {
    requests: requests.length,
    productNs: p,
    baselineNs: b,
    ratio: p.median / b.median,
    wall: { productNs: pw, baselineNs: bw, ratio: pw.median / bw.median },
    productRefusals,
    baselineRefusals,
    baselineOnlyRefusals: baselineOnly,
  };
}

function typicalStateBytes(): { bytes: number; events: number } {
  const { events, expectedDecisions } = typicalSession();
  const fleet = new Fleet();
  const decisions: string[] = [];
  for (const e of events) {
    for (const o of fleet.process(e, e.occurredAt).outputs) {
      if (o.record === 'verdict') decisions.push(o.value.decision);
      if (o.record === 'audit' && o.value.kind === 'VIOLATION')
        throw new Error(`typical session: ${o.value.message}`);
    }
  }
  if (decisions.join() !== expectedDecisions.join()) {
    throw new Error(
      `typical session decided ${decisions.join()}, expected ${expectedDecisions.join()}`,
    );
  }
  return { bytes: serializeState(fleet.get(events[0]!.sessionId)!).length, events: events.length };
}

function fleetStateBytes(fleet: Fleet): BenchResult['stateBytes']['fleet'] {
  const sizes: number[] = [];
  for (const [, s] of fleet.entries()) sizes.push(serializeState(s).length);
  sizes.sort((a, b) => a - b);
  return {
    sessions: sizes.length,
    median: percentile(sizes, 0.5),
    p99: percentile(sizes, 0.99),
    max: sizes[sizes.length - 1] ?? 0,
    mean: sizes.reduce((a, b) => a + b, 0) / sizes.length,
    over1KiB: sizes.filter((x) => x > 1024).length,
  };
}

/**
 * Heap per tracked session of the product's path: heapUsed after a full GC with the sessions
 * built vs before it; and the arena experiment's typed arrays (outside heapUsed) per session,
 * from an OwnedFleet built after it. The
 * packed stream (typed arrays: outside heapUsed) stays; each SessionOpened is handed over as
 * a fresh copy so that the session's key string and policy are owned by the fleet alone, as
 * they would be in the processor. Null without --expose-gc.
 */
function heapPerSession(events: PackedEvents): BenchResult['heap'] {
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') return null;
  gc();
  const before = process.memoryUsage().heapUsed;
  let fleet: SessionsInPlace | null = new SessionsInPlace(engineOptions());
  for (let i = 0; i < events.length; i++) {
    let e = events.get(i);
    if (e.type === 'SessionOpened') e = JSON.parse(JSON.stringify(e)) as ContextEvent;
    fleet.process(e, e.occurredAt);
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  const sessions = fleet.size;
  fleet = null;
  gc();
  const arena = new OwnedFleet(engineOptions());
  for (let i = 0; i < events.length; i++) {
    const e = events.get(i);
    arena.process(e, e.occurredAt);
  }
  return {
    bytesPerSession: (after - before) / sessions,
    arenaBytesPerSession: arena.arenaBytes / arena.size,
    sessions,
  };
}

export function runBench(o: BenchOptions, log: (line: string) => void = () => {}): BenchResult {
  const loadAvgBefore = os.loadavg();
  const g0 = clock();
  const generated = generateFleetPacked({
    sessions: o.sessions,
    events: o.events,
    seed: o.seed,
    faultyShare: o.faultyShare,
  });
  const events = generated.packed;
  const generateMs = since(g0).wall;
  const byType: Record<string, number> = {};
  for (let i = 0; i < events.length; i++) {
    const t = events.typeOf(i);
    byType[t] = (byType[t] ?? 0) + 1;
  }
  const requests = byType['CompactionRequested'] ?? 0;
  log(
    `generated ${events.length} events of ${generated.plans.size} sessions in ${generateMs.toFixed(0)} ms`,
  );

  // The arena experiment (OwnedFleet) and the product's path (SessionsInPlace) alternate, run by run,
  // so that both see the same machine (a shared VM's speed drifts by tens of per cent).
  const runsMs: Timing[] = [];
  const blockRunsMs: Timing[] = [];
  const noArenaMs: Timing[] = [];
  for (let run = 0; run < o.runs; run++) {
    gc();
    const r = timeStream(events, new OwnedFleet(engineOptions()));
    if (r.verdicts !== requests) throw new Error(`${r.verdicts} verdicts for ${requests} requests`);
    runsMs.push(r.ms);
    gc();
    const k = timeBlocks(events, new OwnedFleet(engineOptions()));
    if (k.verdicts !== requests) throw new Error(`blocks: ${k.verdicts} verdicts`);
    blockRunsMs.push(k.ms);
    gc();
    const b = timeStream(events, new SessionsInPlace(engineOptions()));
    if (b.verdicts !== requests) throw new Error(`baseline: ${b.verdicts} verdicts`);
    noArenaMs.push(b.ms);
    log(
      `run ${run + 1}/${o.runs}${run === 0 ? ' (warm-up)' : ''}: ${r.ms.cpu.toFixed(0)} ms CPU, ${r.ms.wall.toFixed(0)} ms wall; engine alone (blocks) ${k.ms.cpu.toFixed(0)} ms CPU; product's path (no arena) ${b.ms.cpu.toFixed(0)} ms CPU`,
    );
  }
  const materializeMs: Timing[] = [];
  for (let run = 0; run < o.runs; run++) {
    gc();
    const ms = timeMaterialize(events).ms;
    if (run > 0 || o.runs === 1) materializeMs.push(ms);
  }
  const timed = runsMs.length > 1 ? runsMs.slice(1) : runsMs;
  const timedBlocks = blockRunsMs.length > 1 ? blockRunsMs.slice(1) : blockRunsMs;
  const timedNoArena = noArenaMs.length > 1 ? noArenaMs.slice(1) : noArenaMs;
  const noArena = {
    runsMs: noArenaMs,
    eventsPerSec: stats(timedNoArena.map((t) => (events.length / t.cpu) * 1000)),
    wallEventsPerSec: stats(timedNoArena.map((t) => (events.length / t.wall) * 1000)).median,
    speedup: stats(timedNoArena.map((t) => t.cpu)).median / stats(timed.map((t) => t.cpu)).median,
  };
  const per = (clockOf: (t: Timing) => number) => {
    const engineOnlyMs =
      stats(timed.map(clockOf)).median - stats(materializeMs.map(clockOf)).median;
    return {
      eventsPerSec: stats(timed.map((t) => (events.length / clockOf(t)) * 1000)),
      decisionsPerSec: stats(timed.map((t) => (requests / clockOf(t)) * 1000)),
      engineOnlyEventsPerSec: (events.length / engineOnlyMs) * 1000,
      blockEventsPerSec: stats(timedBlocks.map((t) => (events.length / clockOf(t)) * 1000)),
    };
  };
  const cpu = per((t) => t.cpu);
  const wall = per((t) => t.wall);

  // The captured states go out of scope before the heap is measured.
  const { decision, fleetBytes } = ((captured: Captured) => ({
    decision: benchDecisions(captured, o),
    fleetBytes: fleetStateBytes(captured.fleet),
  }))(capture(events));
  log(
    `decision: engine ${decision.productNs.median.toFixed(0)} ns, baseline ${decision.baselineNs.median.toFixed(1)} ns`,
  );
  const typical = typicalStateBytes();
  const heap = heapPerSession(events);

  return {
    date: new Date().toISOString(),
    machine: {
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      cpus: os.cpus().length,
      cpusAllowed: cpusAllowed(),
      node: process.version,
      totalMemGiB: Math.round(os.totalmem() / 2 ** 30),
      loadAvgBefore,
      loadAvgAfter: os.loadavg(),
      gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
    },
    options: o,
    fleet: { events: o.events, sessions: generated.plans.size, byType, requests, generateMs },
    stream: { runsMs, materializeMs, blockRunsMs, ...cpu, wall, noArena },
    decision,
    stateBytes: { typical: typical.bytes, typicalEvents: typical.events, fleet: fleetBytes },
    heap,
  };
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;

function row(name: string, x: Stats, wallMedian: number, digits = 0): string {
  const f = (v: number) => (digits === 0 ? int(v) : v.toFixed(digits));
  return `| ${name} | ${f(x.median)} | ${f(x.min)} | ${f(x.max)} | ${pct(x.spread)} | ${f(wallMedian)} |`;
}

export function formatReport(r: BenchResult): string {
  const m = r.machine;
  const d = r.decision;
  const s = r.stateBytes;
  const st = r.stream;
  const mix = Object.entries(r.fleet.byType)
    .sort((a, b) => b[1] - a[1])
    .map(([t, n]) => `${t} ${pct(n / r.fleet.events)}`)
    .join(', ');
  const ms = (ts: Timing[]) => ts.map((t) => `${int(t.cpu)}/${int(t.wall)}`).join(', ');
  return [
    `date ${r.date}; ${m.cpuModel}, ${m.cpus} CPUs (allowed: ${m.cpusAllowed ?? '?'}), Node ${m.node}, ${m.totalMemGiB} GiB; load avg before ${m.loadAvgBefore.map((x) => x.toFixed(2)).join(' ')}, after ${m.loadAvgAfter.map((x) => x.toFixed(2)).join(' ')}`,
    `fleet: ${int(r.fleet.events)} events, ${int(r.fleet.sessions)} sessions, seed ${r.options.seed}, faulty share ${r.options.faultyShare}; generated in ${int(r.fleet.generateMs)} ms`,
    `mix: ${mix}`,
    '',
    `| measure (per CPU-second; ${st.runsMs.length - 1} runs after a warm-up) | median | min | max | spread | median, wall clock |`,
    '|---|---:|---:|---:|---:|---:|',
    row(
      'events/s, arena experiment: OwnedFleet.process (bench/arena; events materialized in the loop)',
      st.eventsPerSec,
      st.wall.eventsPerSec.median,
    ),
    row(
      'events/s, arena experiment, engine only (materializing subtracted)',
      { median: st.engineOnlyEventsPerSec, min: NaN, max: NaN, spread: NaN },
      st.wall.engineOnlyEventsPerSec,
    ).replace(/NaN( %)?/g, '–'),
    row(
      `events/s, arena experiment, engine only (events handed over in blocks of ${int(BLOCK)}, materialized outside the timed loops)`,
      st.blockEventsPerSec,
      st.wall.blockEventsPerSec.median,
    ),
    row(
      "events/s, the product's path: SessionsInPlace (Map + evolveInPlace, as audit and the processor; alternating runs)",
      st.noArena.eventsPerSec,
      st.noArena.wallEventsPerSec,
    ),
    row(
      'decisions/s (requests decided, same runs)',
      st.decisionsPerSec,
      st.wall.decisionsPerSec.median,
    ),
    row(
      `engine ns per decision (evolve on ${int(d.requests)} requests)`,
      d.productNs,
      d.wall.productNs.median,
    ),
    row(
      "baseline ns per decision (seed's assert_compaction_safe)",
      d.baselineNs,
      d.wall.baselineNs.median,
      1,
    ),
    '',
    `runs, ms CPU/wall: warm-up ${ms(st.runsMs.slice(0, 1))}; timed ${ms(st.runsMs.slice(1))}; engine alone in blocks ${ms(st.blockRunsMs.slice(1))}; materializing alone ${ms(st.materializeMs)}`,
    `turn arena speedup (product's path CPU time ÷ arena experiment CPU time, medians): ${st.noArena.speedup.toFixed(2)}x`,
    `ratio engine/baseline per decision: ${d.ratio.toFixed(0)}x (wall clock ${d.wall.ratio.toFixed(0)}x); refusals: engine ${int(d.productRefusals)}, baseline ${int(d.baselineRefusals)}, baseline only ${int(d.baselineOnlyRefusals)}`,
    `state bytes (serializeState): typical session (${s.typicalEvents} events) ${s.typical} B; fleet of ${int(s.fleet.sessions)}: median ${s.fleet.median} B, p99 ${s.fleet.p99} B, max ${s.fleet.max} B, mean ${s.fleet.mean.toFixed(0)} B, over 1 KiB ${s.fleet.over1KiB}`,
    r.heap
      ? `heap per tracked session (product's path): ${int(r.heap.bytesPerSession)} B; the arena experiment adds ${int(r.heap.arenaBytesPerSession)} B outside the heap (${int(r.heap.sessions)} sessions)`
      : 'heap per tracked session: n/a (run node with --expose-gc)',
  ].join('\n');
}

function parseArgs(argv: readonly string[]): { options: BenchOptions; json: boolean } {
  return parseBenchArgs(
    argv,
    { full: FULL, quick: QUICK },
    {
      '--sessions': 'sessions',
      '--events': 'events',
      '--seed': 'seed',
      '--runs': 'runs',
      '--faulty-share': 'faultyShare',
      '--decision-rounds': 'decisionRounds',
      '--min-round-ms': 'minRoundMs',
    },
  );
}

if (require.main === module) {
  const { options, json } = parseArgs(process.argv.slice(2));
  const result = runBench(options, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(json ? `${JSON.stringify(result, null, 2)}\n` : `${formatReport(result)}\n`);
}
