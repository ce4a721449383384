/**
 * Client throughput and latency: requests per second through compaction-guard/client
 * and p50/p99 from the `requestCompaction` call to its resolved verdict, at fixed request rates
 * (5 TurnAppended per request, 1,000 sessions), against the real processor in a child process.
 * The processor's own figure in the same run: a plain read_committed consumer of the verdict
 * topic beside the client, as bench/latency.ts measures it (receive time − requestedAt).
 *
 *   npm run bench:client                        # 100 and 1,000 req/s; 3 runs of 10 s each
 *   npm run bench:client -- --quick             # 100 req/s, 1 run of 3 s
 *   npm run bench:client -- --rates 100,1000 --seconds 20 --runs 5
 */
import { GuardClient, type GuardedSession } from '../src/client';
import type { Config } from '../src/config/config';
import { verdictType } from '../src/schema/schemas';
import { TYPICAL_POLICY } from './typical';
import {
  benchConfig,
  createTopic,
  describeMachine,
  type Env,
  fmt,
  machine,
  openEnv,
  percentile,
  runMain,
  saveResult,
  sleep,
  spawnProcessor,
  stats,
  rateRunOptions,
} from './kafka-common';

const {
  rates: RATES,
  seconds: SECONDS,
  warmupS: WARMUP_S,
  runs: RUNS,
} = rateRunOptions('100,1000');
const TURNS_PER_REQUEST = 5;
const SESSIONS = 1000;
const PARTITIONS = 6;
const TICK_MS = 5;

interface RunResult {
  rate: number;
  requests: number;
  verdicts: number;
  failures: number;
  achievedRate: number;
  clientP50: number;
  clientP99: number;
  processorP50: number;
  processorP99: number;
}

/** Reads every verdict read_committed, as bench/latency.ts does: receive time − requestedAt. */
async function processorFigure(
  env: Env,
  c: Config,
  from: () => number,
): Promise<{ latencies: number[]; stop(): Promise<void> }> {
  const latencies: number[] = [];
  const consumer = env.kafka.consumer({
    groupId: `${c.groupId}-reader`,
    readUncommitted: false,
    maxWaitTimeInMs: 50, // as the client's own verdict consumer (src/client/verdicts.ts)
  });
  let joined!: () => void;
  const joinedP = new Promise<void>((r) => (joined = r));
  consumer.on(consumer.events.GROUP_JOIN, () => joined());
  await consumer.connect();
  await consumer.subscribe({ topic: c.verdictTopic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const at = Date.now();
      for (const m of batch.messages) {
        const v = verdictType.fromBuffer(m.value!.subarray(5)) as { requestedAt: number };
        if (Number(v.requestedAt) >= from()) latencies.push(at - Number(v.requestedAt));
      }
    },
  });
  await joinedP;
  return { latencies, stop: () => consumer.disconnect() };
}

async function runOnce(env: Env, rate: number): Promise<RunResult> {
  const c = benchConfig(env, { partitions: PARTITIONS });
  await createTopic(env.admin, c.inputTopic, PARTITIONS);
  const child = await spawnProcessor(c);
  const client = new GuardClient({ env: {}, config: c, verdictTimeoutMs: 30_000 });
  await client.connect();
  let measureFrom = Infinity;
  const reader = await processorFigure(env, c, () => measureFrom);
  const sessions: GuardedSession[] = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(client.session(`bc-${c.groupId}-${i}`));
  await Promise.all(sessions.map((s) => s.open(TYPICAL_POLICY)));
  const clientLatencies: number[] = [];
  let failures = 0;
  let verdicts = 0;
  const inFlight: Promise<void>[] = [];
  let next = 0;
  /** Turns asked of each session so far (its calls may still be queued). */
  const turnsOf = new Array<number>(SESSIONS).fill(0);
  const request = (i: number) => {
    const s = sessions[i]!;
    // Turns first (not awaited: the session sends them in call order), then the request.
    for (let k = 0; k < TURNS_PER_REQUEST; k++) void s.appendTurn({ role: 'USER', tokens: 100 });
    const t = (turnsOf[i]! += TURNS_PER_REQUEST);
    const tail = Math.max(1, t - 2);
    const measured = Date.now() >= measureFrom;
    const t0 = performance.now();
    const p = s
      .requestCompaction({
        requestId: `r-${t}`,
        summaryInput: { start: 0, end: tail },
        tailStart: tail,
        occupancyTokens: 100_500,
      })
      .then(
        () => {
          verdicts++;
          if (measured) clientLatencies.push(performance.now() - t0);
        },
        () => {
          failures++;
        },
      );
    inFlight.push(p);
  };
  const started = Date.now();
  measureFrom = started + WARMUP_S * 1000;
  const endAt = measureFrom + SECONDS * 1000;
  let sent = 0;
  let sentMeasured = 0;
  // Open loop with catch-up, as bench/latency.ts: every tick, ask what is due by now.
  while (Date.now() < endAt) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate) - sent;
    if (due > 0) {
      for (let i = 0; i < due; i++) request(next++ % SESSIONS);
      sent += due;
      if (Date.now() >= measureFrom) sentMeasured += due;
    } else await sleep(TICK_MS);
  }
  const measuredS = (Date.now() - measureFrom) / 1000;
  await Promise.all(inFlight);
  await reader.stop();
  await client.close();
  await child.stop();
  clientLatencies.sort((a, b) => a - b);
  reader.latencies.sort((a, b) => a - b);
  return {
    rate,
    requests: sent,
    verdicts,
    failures,
    achievedRate: sentMeasured / measuredS,
    clientP50: percentile(clientLatencies, 50),
    clientP99: percentile(clientLatencies, 99),
    processorP50: percentile(reader.latencies, 50),
    processorP99: percentile(reader.latencies, 99),
  };
}

async function main(): Promise<void> {
  const env = await openEnv();
  try {
    const m0 = machine();
    const runs: RunResult[] = [];
    for (const rate of RATES) {
      for (let r = 1; r <= RUNS; r++) {
        const res = await runOnce(env, rate);
        runs.push(res);
        console.error(
          `rate ${rate}/s run ${r}/${RUNS}: achieved ${fmt(res.achievedRate)} req/s, ${res.requests} requests, ${res.verdicts} verdicts, ${res.failures} failed; client p50 ${fmt(res.clientP50, 1)} ms p99 ${fmt(res.clientP99, 1)} ms; processor p50 ${res.processorP50} ms p99 ${res.processorP99} ms`,
        );
      }
    }
    const m1 = machine();
    console.log(
      `\n## client: ${RUNS} runs × ${SECONDS} s (after ${WARMUP_S} s warm-up) per rate; ${TURNS_PER_REQUEST} TurnAppended per request; ${SESSIONS} sessions; ${PARTITIONS} partitions`,
    );
    console.log(
      `machine: ${describeMachine(m0)} (before); load avg after ${(m1.loadavg as number[]).join(' ')}\n`,
    );
    console.log(
      '| req/s (target) | achieved req/s | verdicts / requests | client p50 ms | client p99 ms | processor p50 ms | processor p99 ms |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|');
    const summary = RATES.map((rate) => {
      const rs = runs.filter((x) => x.rate === rate);
      const med = (k: keyof RunResult) => stats(rs.map((x) => x[k])).median;
      const row = {
        rate,
        achieved: med('achievedRate'),
        verdicts: rs.reduce((a, x) => a + x.verdicts, 0),
        requests: rs.reduce((a, x) => a + x.requests, 0),
        clientP50: med('clientP50'),
        clientP99: med('clientP99'),
        processorP50: med('processorP50'),
        processorP99: med('processorP99'),
      };
      console.log(
        `| ${rate} | ${fmt(row.achieved)} | ${row.verdicts} / ${row.requests} | ${fmt(row.clientP50, 1)} | ${fmt(row.clientP99, 1)} | ${fmt(row.processorP50)} | ${fmt(row.processorP99)} |`,
      );
      return row;
    });
    const file = saveResult('client', { machine: { before: m0, after: m1 }, runs, summary });
    console.error(`\nresult: ${file}`);
  } finally {
    await env.stop();
  }
}

runMain(main);
