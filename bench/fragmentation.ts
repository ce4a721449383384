/**
 * Fragmentation benchmark (not a test): one session whose every other turn is pinned (as
 * LangChain's default pins every user message that states a rule), 100,000 turns long, with a
 * compaction request every 1,000 turns (at 500, 1,500, ...) whose summary input leaves the lower
 * half of the pins out (PINNED coverage: an EVICTED_PINNED refusal naming them). Without §4a's
 * bound `pins` grew by a range per pinned turn, and every event and decision cost O(fragments);
 * with it each set keeps at most 128 ranges.
 *
 * Measured on the engine alone (`evolveInPlace`, events built before timing): the CPU cost per
 * turn and per decision in windows ending at 1k, 10k and 100k turns, against the same session
 * without pins in the same run (alternating runs), the ranges each set holds at the end, and the
 * encoded size of every verdict, spill request and audit record (Avro with the wire header, plus
 * the key, as the broker counts it).
 *
 *   npm run bench:fragmentation                  # 100k turns, 7 runs (the first a warm-up)
 *   npm run bench:fragmentation -- --quick       # 10k turns, 2 runs
 *   npm run bench:fragmentation -- --turns 200000 --runs 3 --json
 */
import * as os from 'node:os';
import {
  type CompactionRequested,
  type ContextEvent,
  type Output,
  type SessionState,
  engineOptions,
} from '../src/engine';
import { evolveInPlace } from '../src/engine/step';
import { estimatedBytes } from '../src/kafka/outputChunks';
import { auditRecordType, spillRequestType, verdictType } from '../src/schema/schemas';
import { parseBenchArgs } from './args';
import { PINNED_POLICY } from './amplificationShapes';

interface Options {
  turns: number;
  runs: number;
  /** A compaction request every this many turns. */
  requestEvery: number;
  /** Turns per timing window. */
  window: number;
}

const FULL: Options = { turns: 100_000, runs: 7, requestEvery: 1000, window: 1000 };
const QUICK: Options = { turns: 10_000, runs: 2, requestEvery: 1000, window: 1000 };

const T0 = 1_767_225_600_000;
const options = engineOptions();

/** The session's events: SessionOpened, then turns (every other one pinned) and requests. */
function sessionEvents(o: Options, pinned: boolean): ContextEvent[] {
  const id = pinned ? 'fragmented' : 'plain';
  let seq = 0;
  const env = () => ({ sessionId: id, seq, eventId: `${id}-${seq}`, occurredAt: T0 + seq++ });
  const events: ContextEvent[] = [
    {
      type: 'SessionOpened',
      ...env(),
      policy: PINNED_POLICY,
    },
  ];
  for (let t = 0; t < o.turns; t++) {
    const pin = pinned && t % 2 === 0;
    events.push({
      type: 'TurnAppended',
      ...env(),
      turn: t,
      tokens: { start: 10 * t, end: 10 * t + 10 },
      messages: { start: t, end: t + 1 },
      role: pin ? 'USER' : 'ASSISTANT',
      pins: pin ? ['CONSTRAINT'] : [],
    });
    // Mid-window (turn 500, 1,500, ...), so that each timing window holds a request.
    if ((t + 1) % o.requestEvery === Math.floor(o.requestEvery / 2)) {
      const h = t + 1;
      events.push({
        type: 'CompactionRequested',
        ...env(),
        requestId: `r${h}`,
        unit: 'TURNS',
        summaryInput: { start: Math.floor(h / 2), end: h - 12 },
        tailStart: h - 12,
        occupancyTokens: 170_000,
      } satisfies CompactionRequested);
    }
  }
  return events;
}

function encodedBytes(o: Output): number {
  const body =
    o.record === 'verdict'
      ? verdictType.toBuffer(o.value)
      : o.record === 'spill-request'
        ? spillRequestType.toBuffer(o.value)
        : auditRecordType.toBuffer(o.value);
  return estimatedBytes({ key: o.value.sessionId, value: Buffer.concat([Buffer.alloc(5), body]) });
}

interface Run {
  /** ns of CPU per turn in each window, by the window's last turn. */
  turnNs: Map<number, number>;
  /** ns of CPU per decision among the requests in each window. */
  decisionNs: Map<number, number>;
  totalMs: number;
  largest: Record<Output['record'], number>;
  decisions: Record<string, number>;
  coarsenings: number;
  ranges: Record<string, number>;
}

function setRanges(s: SessionState): Record<string, number> {
  const out: Record<string, number> = {
    pins: s.pins.length / 2,
    T: s.truncated.length / 2,
    S: s.summary.length / 2,
    A0: s.ackPermanent.length / 2,
  };
  for (const [name, sets] of [
    ['P', s.spilled],
    ['A1', s.ackOnce],
    ['X', s.unspillable],
    ['K', s.coarsened],
  ] as const) {
    // `?? {}`: an engine before §4a has no K (the bench also runs on older trees, for comparison).
    for (const [unit, set] of Object.entries(sets ?? {})) out[`${name} ${unit}`] = set.length / 2;
  }
  return out;
}

/** Window ends reported: 1k, 10k, 100k turns and the last, when within the run. */
function windowEnds(o: Options): number[] {
  return [
    ...new Set([1000, 10_000, 100_000, o.turns].filter((n) => n <= o.turns && n >= o.window)),
  ];
}

/** CPU time (user + system) of this process, in ns (microsecond resolution). */
function cpuNs(): bigint {
  const u = process.cpuUsage();
  return BigInt(u.user + u.system) * 1000n;
}

function runOnce(o: Options, events: readonly ContextEvent[]): Run {
  const ends = new Set(windowEnds(o));
  const turnNs = new Map<number, number>();
  const decisionNs = new Map<number, number>();
  const largest: Run['largest'] = { verdict: 0, 'spill-request': 0, audit: 0 };
  const decisions: Record<string, number> = {};
  let coarsenings = 0;
  let state: SessionState | undefined;
  let turns = 0;
  // CPU time of this process (the machine is shared): turns are timed in blocks (one clock read
  // per block, not per turn), each request alone; the outputs are measured after the window's
  // timing.
  let turnTime = 0n;
  let decisionTime = 0n;
  let windowDecisions = 0;
  let pending: Output[] = [];
  const started = process.hrtime.bigint();
  let block = cpuNs();
  for (const e of events) {
    if (e.type === 'CompactionRequested') {
      const t = cpuNs();
      turnTime += t - block;
      const r = evolveInPlace(state, e, e.occurredAt, options);
      block = cpuNs();
      decisionTime += block - t;
      windowDecisions++;
      state = r.state;
      pending.push(...r.outputs);
      continue;
    }
    const r = evolveInPlace(state, e, e.occurredAt, options);
    state = r.state;
    if (r.outputs.length > 0) pending.push(...r.outputs);
    if (e.type !== 'TurnAppended' || ++turns % o.window !== 0) continue;
    const t = cpuNs();
    turnTime += t - block;
    if (ends.has(turns)) {
      turnNs.set(turns, Number(turnTime) / o.window);
      decisionNs.set(turns, windowDecisions ? Number(decisionTime) / windowDecisions : NaN);
    }
    for (const out of pending) {
      largest[out.record] = Math.max(largest[out.record], encodedBytes(out));
      if (out.record === 'verdict') {
        decisions[out.value.decision] = (decisions[out.value.decision] ?? 0) + 1;
      }
      if (out.record === 'audit' && out.value.code === 'STATE_COARSENED') coarsenings++;
    }
    pending = [];
    turnTime = 0n;
    decisionTime = 0n;
    windowDecisions = 0;
    block = cpuNs();
  }
  return {
    turnNs,
    decisionNs,
    totalMs: Number(process.hrtime.bigint() - started) / 1e6,
    largest,
    decisions,
    coarsenings,
    ranges: setRanges(state!),
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function main(): void {
  const { options: o, json } = parseBenchArgs(
    process.argv.slice(2),
    { full: FULL, quick: QUICK },
    {
      '--turns': 'turns',
      '--runs': 'runs',
      '--request-every': 'requestEvery',
      '--window': 'window',
    },
    (v) => Number.isSafeInteger(v) && v > 0,
  );
  const log = json ? console.error : console.log;
  const fragmented = sessionEvents(o, true);
  const plain = sessionEvents(o, false);
  const runs: { fragmented: Run[]; plain: Run[] } = { fragmented: [], plain: [] };
  for (let i = 0; i < o.runs; i++) {
    // Alternating order, so that the machine's drift hits both alike; run 0 is a warm-up.
    const order =
      i % 2 === 0 ? (['fragmented', 'plain'] as const) : (['plain', 'fragmented'] as const);
    for (const which of order) {
      const r = runOnce(o, which === 'fragmented' ? fragmented : plain);
      if (i > 0 || o.runs === 1) runs[which].push(r);
      log(`run ${i}${i === 0 ? ' (warm-up)' : ''} ${which}: ${r.totalMs.toFixed(0)} ms`);
    }
  }
  const rows = windowEnds(o).map((end) => {
    const f = runs.fragmented.map((r) => r.turnNs.get(end)!);
    const p = runs.plain.map((r) => r.turnNs.get(end)!);
    const fd = runs.fragmented.map((r) => r.decisionNs.get(end)!);
    const pd = runs.plain.map((r) => r.decisionNs.get(end)!);
    return {
      turns: end,
      fragmentedNsPerTurn: median(f),
      fragmentedMinMax: [Math.min(...f), Math.max(...f)],
      plainNsPerTurn: median(p),
      ratio: median(f) / median(p),
      fragmentedNsPerDecision: median(fd),
      plainNsPerDecision: median(pd),
    };
  });
  const last = runs.fragmented[runs.fragmented.length - 1]!;
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    loadavg: os.loadavg(),
    options: o,
    rows,
    fragmented: {
      ranges: last.ranges,
      decisions: last.decisions,
      coarsenings: last.coarsenings,
      largestBytes: last.largest,
    },
    plain: { largestBytes: runs.plain[runs.plain.length - 1]!.largest },
  };
  if (json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(
    '\nturns | ns/turn, fragmented (min–max) | ns/turn, no pins | ratio | ns/decision, fragmented | ns/decision, no pins',
  );
  for (const r of rows) {
    console.log(
      `${r.turns} | ${r.fragmentedNsPerTurn.toFixed(0)} (${r.fragmentedMinMax.map((x) => x.toFixed(0)).join('–')}) | ${r.plainNsPerTurn.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.fragmentedNsPerDecision.toFixed(0)} | ${r.plainNsPerDecision.toFixed(0)}`,
    );
  }
  console.log(`\nranges per set at the end (fragmented): ${JSON.stringify(last.ranges)}`);
  console.log(
    `verdicts: ${JSON.stringify(last.decisions)}; STATE_COARSENED audits: ${last.coarsenings}`,
  );
  console.log(
    `largest encoded record (bytes, key + value + framing): ${JSON.stringify(last.largest)}`,
  );
}

main();
