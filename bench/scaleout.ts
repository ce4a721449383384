/**
 * Scale-out: 1 vs 2 processor instances (the real processor, EOS, one consumer group)
 * draining the same input (the same pre-built JSON fleet events, 6 partitions). Each run uses a
 * fresh input topic, group and output topics. By default each instance is a child process
 * of its own (as deployed: its own event loop, so two instances can use two cores);
 * `--in-process` runs them with startProcessor in this process (one event loop shared).
 *
 *   npm run bench:scaleout                  # 100k events, 3 runs of 1 and of 2 instances
 *   npm run bench:scaleout -- --quick       # 3k events, 1 run each
 *   npm run bench:scaleout -- --in-process --instances 1,2,3
 *
 * Each run: the instances start on an empty input topic and the bench waits until the group is
 * stable with every instance ready; then the pre-built events are produced (kafkajs, idempotent,
 * acks=all, from this process) and drain = from the start of producing to every input offset
 * committed (producing alone is reported: it overlaps the drain and is its floor). Total adds
 * the start-up (spawn, joins, rebalances).
 */
import type { Message } from 'kafkajs';
import pino from 'pino';
import type { Config } from '../src/config/config';
import { startProcessor } from '../src/cli/run';
import { generateFleetArray } from '../src/sim';
import {
  benchConfig,
  createTopic,
  describeMachine,
  type Env,
  flag,
  fmt,
  machine,
  openEnv,
  option,
  preload,
  type Published,
  publishedByMetrics,
  publishedMismatch,
  publishedOffline,
  saveResult,
  sleep,
  spawnProcessor,
  stats,
  waitCommitted,
  runMain,
} from './kafka-common';

const QUICK = flag('quick');
const IN_PROCESS = flag('in-process');
const EVENTS = Number(option('events') ?? (QUICK ? 3_000 : 100_000));
const SESSIONS = Number(option('sessions') ?? (QUICK ? 30 : 1_000));
const RUNS = Number(option('runs') ?? (QUICK ? 1 : 3));
const INSTANCES = (option('instances') ?? '1,2').split(',').map(Number);
const PARTITIONS = Number(option('partitions') ?? 6);

interface Run {
  instances: number;
  drainMs: number;
  totalMs: number;
  /** Producing the input alone (overlaps the drain): a floor of drainMs. */
  produceMs: number;
}

/**
 * Instances one after the other (a concurrent first start of two instances races in the schema
 * registry: Apicurio answers "A rule named 'COMPATIBILITY' already exists" to the second
 * registration of a new subject, and that instance exits), then until the group is stable
 * with every instance ready.
 */
interface Instances {
  stop(): Promise<void>;
  /** What the instances published together (each one's /metrics). */
  published(): Promise<Published>;
}

async function startInstances(env: Env, c: Config, k: number): Promise<Instances> {
  const stops: (() => Promise<void>)[] = [];
  const ready: (() => boolean)[] = [];
  const ports: number[] = [];
  for (let i = 0; i < k; i++) {
    if (IN_PROCESS) {
      const r = await startProcessor(c, pino({ level: 'silent' }));
      stops.push(r.stop);
      ready.push(() => r.processor.isReady());
      ports.push(r.httpPort);
    } else {
      const child = await spawnProcessor(c);
      stops.push(child.stop);
      ready.push(() => true);
      ports.push(child.httpPort);
    }
  }
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { groups } = await env.admin.describeGroups([c.groupId]);
    const g = groups[0];
    if (
      g?.state === 'Stable' &&
      g.members.length === k &&
      g.members.every((m) => m.memberAssignment.length > 0) &&
      ready.every((f) => f())
    )
      break;
    if (Date.now() > deadline)
      throw new Error(
        `group ${c.groupId} not stable with ${k} members: ${g?.state} ${g?.members.length}`,
      );
    await sleep(100);
  }
  await sleep(1000);
  return {
    stop: async () => void (await Promise.all(stops.map((f) => f()))),
    published: async () => {
      const all = await Promise.all(ports.map(publishedByMetrics));
      return all.reduce((sum, p) => {
        const audits = { ...sum.audits };
        for (const [code, n] of Object.entries(p.audits)) audits[code] = (audits[code] ?? 0) + n;
        return {
          verdicts: sum.verdicts + p.verdicts,
          spillRequests: sum.spillRequests + p.spillRequests,
          audits,
        };
      });
    },
  };
}

/** Instances first (empty input), then the pre-built events are produced; drain = produce start to all committed. */
async function runOnce(
  env: Env,
  messages: readonly Message[],
  k: number,
  expected: Published,
): Promise<Run> {
  const c = benchConfig(env, { partitions: PARTITIONS });
  await createTopic(env.admin, c.inputTopic, PARTITIONS);
  const t = Date.now();
  const instances = await startInstances(env, c, k);
  const t0 = Date.now();
  const produceMs = await preload(env.kafka, c.inputTopic, messages);
  const done = await waitCommitted(env.admin, c.groupId, c.inputTopic, 600_000, 50);
  // The run measured the fleet's workload only if the instances published what the offline
  // engine does for the same events (bench/e2e.ts `checkWorkload`).
  const diffs = await publishedMismatch(() => instances.published(), expected);
  await instances.stop();
  if (diffs.length > 0) {
    throw new Error(
      `${k} instance(s) published other outputs than the offline engine: ${diffs.join('; ')}`,
    );
  }
  await env.admin.deleteTopics({ topics: [c.inputTopic] }).catch(() => undefined);
  return { instances: k, drainMs: done - t0, totalMs: done - t, produceMs };
}

async function main(): Promise<void> {
  const env = await openEnv();
  try {
    const m0 = machine();
    const { events } = generateFleetArray({
      sessions: SESSIONS,
      events: EVENTS,
      seed: 20_261_202,
      faultyShare: 0.1,
    });
    const messages: Message[] = events.map((e) => ({ key: e.sessionId, value: JSON.stringify(e) }));
    const expected = publishedOffline(events);
    const runs: Run[] = [];
    for (let r = 1; r <= RUNS; r++) {
      for (const k of INSTANCES) {
        const res = await runOnce(env, messages, k, expected);
        runs.push(res);
        console.error(
          `run ${r}/${RUNS}, ${k} instance(s): drain ${fmt(res.drainMs)} ms (${fmt(EVENTS / (res.drainMs / 1000))} events/s), total ${fmt(res.totalMs)} ms; producing the input alone ${fmt(res.produceMs)} ms`,
        );
      }
    }
    const m1 = machine();
    console.log(
      `\n## scale-out: ${fmt(EVENTS)} JSON events, ${fmt(SESSIONS)} sessions, ${PARTITIONS} partitions, ${RUNS} runs, instances ${IN_PROCESS ? 'in one process' : 'one child process each'}`,
    );
    console.log(
      `machine: ${describeMachine(m0)} (before); load avg after ${(m1.loadavg as number[]).join(' ')}\n`,
    );
    console.log(
      '| instances | drain ms (median) | min | max | events/s | producing alone ms | total ms (with start-up) | speed-up vs 1 |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    const one = stats(
      runs.filter((x) => x.instances === INSTANCES[0]).map((x) => x.drainMs),
    ).median;
    for (const k of INSTANCES) {
      const rs = runs.filter((x) => x.instances === k);
      const d = stats(rs.map((x) => x.drainMs));
      console.log(
        `| ${k} | ${fmt(d.median)} | ${fmt(d.min)} | ${fmt(d.max)} | ${fmt(EVENTS / (d.median / 1000))} | ${fmt(stats(rs.map((x) => x.produceMs)).median)} | ${fmt(stats(rs.map((x) => x.totalMs)).median)} | ${fmt(one / d.median, 2)} |`,
      );
    }
    const file = saveResult('scaleout', {
      machine: { before: m0, after: m1 },
      events: EVENTS,
      sessions: SESSIONS,
      partitions: PARTITIONS,
      inProcess: IN_PROCESS,
      runs,
    });
    console.error(`\nresult: ${file}`);
  } finally {
    await env.stop();
  }
}

runMain(main);
