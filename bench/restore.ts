/**
 * Memory and restore.
 *
 * 1. Engine only (no Kafka): heap per tracked session and ns per decision (Fleet.process of a
 *    CompactionRequested on random distinct sessions) at 10k, 100k, 1M sessions. Every session
 *    holds the state of bench/typical.ts's typical session (200 turns, 3 pins, 2 truncations,
 *    3 compactions), each a fresh object graph from deserializeState, exactly as a restore
 *    builds it.
 * 2. Restore: the changelog is written directly (serializeState of that typical state, keyed by
 *    sessionId, spread over 6 partitions), then `startProcessor` is timed until
 *    `processor.isReady()` (group join + zombie-fencing producers + barriers + reading the
 *    changelog), in this process; heap per restored session (after GC) alongside.
 *    Baseline on the same broker: kcat reading the same changelog to the end (-e) into /dev/null.
 *
 *   npm run bench:restore                       # 10k/100k/1M engine; restore 100k (3 runs) and 1M (1 run)
 *   npm run bench:restore -- --quick            # 1k/5k engine; restore 5k, 1 run
 *   npm run bench:restore -- --restore 100000 --runs 3 --engine 10000,100000
 *   npm run bench:restore -- --engine '' --restore 1000000 --clients kafkajs,platformatic
 *
 * `--clients`: the Kafka clients (CG_KAFKA_CLIENT) each restore run is timed with, one after
 * the other on the same changelog (default: kafkajs).
 */
import { spawn } from 'node:child_process';
import type { Message } from 'kafkajs';
import pino from 'pino';
import { loadConfig, type Config } from '../src/config/config';
import { startProcessor } from '../src/cli/run';
import type { CompactionRequested } from '../src/engine/events';
import { Fleet } from '../src/engine/fleet';
import { deserializeState, serializeState } from '../src/engine/serialize';
import { typicalSession } from './typical';
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
  saveResult,
  sleep,
  stats,
  runMain,
} from './kafka-common';

const QUICK = flag('quick');
const ENGINE_SIZES = (option('engine') ?? (QUICK ? '1000,5000' : '10000,100000,1000000'))
  .split(',')
  .filter(Boolean)
  .map(Number);
const RESTORE_SIZES = (option('restore') ?? (QUICK ? '5000' : '100000,1000000'))
  .split(',')
  .filter(Boolean)
  .map(Number);
const RUNS = Number(option('runs') ?? (QUICK ? 1 : 3));
/** Restores of 1M sessions and more: runs each (they take long). */
const RUNS_LARGE = Number(option('runs-large') ?? 1);
// Each read as CG_KAFKA_CLIENT is (its settings row): a misspelt client is refused, not run.
const CLIENTS: KafkaClient[] = (option('clients') ?? 'kafkajs')
  .split(',')
  .filter(Boolean)
  .map((v) => loadConfig({ CG_KAFKA_CLIENT: v }).kafkaClient);
const DECISIONS = Number(option('decisions') ?? (QUICK ? 1000 : 10_000));
const PARTITIONS = 6;

const g = (globalThis as { gc?: () => void }).gc;
function gc(): void {
  if (!g) throw new Error('run node with --expose-gc (npm run bench:restore does)');
  for (let i = 0; i < 3; i++) g();
}

/**
 * Memory after a full GC once V8's array-buffer sweeper has caught up: it frees dead Buffers'
 * backing stores concurrently, so `arrayBuffers` read right after `gc()` still counts them
 * (measured: one serialized state per session of replaced changelog copies). GC, wait, GC again, then read.
 */
async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  gc();
  await sleep(200);
  gc();
  return process.memoryUsage();
}

const typical = (() => {
  const fleet = new Fleet();
  // The engine bench's typical session, sessionId included: the same state size it reports.
  const { events } = typicalSession();
  for (const e of events) fleet.process(e, e.occurredAt);
  return { bytes: serializeState(fleet.get(events[0]!.sessionId)!), nextSeq: events.length };
})();

function request(sessionId: string, seq: number): CompactionRequested {
  return {
    type: 'CompactionRequested',
    sessionId,
    seq,
    eventId: `${sessionId}-${seq}`,
    occurredAt: 1_767_225_600_000 + seq * 1000,
    requestId: `bench-${seq}`,
    unit: 'TURNS',
    summaryInput: { start: 0, end: 190 },
    tailStart: 190,
    occupancyTokens: 100_500,
  };
}

interface EngineRow {
  sessions: number;
  heapBytesPerSession: number;
  nsPerDecision: ReturnType<typeof stats>;
}

function engineAt(n: number): EngineRow {
  gc();
  const before = process.memoryUsage().heapUsed;
  const fleet = new Fleet();
  for (let i = 0; i < n; i++) fleet.set(`sess-${i}`, deserializeState(typical.bytes));
  gc();
  const heapBytesPerSession = (process.memoryUsage().heapUsed - before) / n;
  // Distinct random sessions per round (a partial Fisher-Yates over the ids), one request each.
  const m = Math.min(DECISIONS, n);
  const ids = Array.from({ length: n }, (_, i) => i);
  let x = 12345;
  const rnd = () => (x = (x * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < m; i++) {
      const j = i + Math.floor(rnd() * (n - i));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    const inputs = ids.slice(0, m).map((i) => request(`sess-${i}`, typical.nextSeq));
    const t = process.hrtime.bigint();
    for (const input of inputs) fleet.process(input, input.occurredAt);
    const ns = Number(process.hrtime.bigint() - t) / m;
    // Round 0 is a warm-up.
    if (round > 0) rounds.push(ns);
    // Every round decides on the typical state: reset the sessions just asked.
    for (const i of ids.slice(0, m)) fleet.set(`sess-${i}`, deserializeState(typical.bytes));
  }
  return { sessions: n, heapBytesPerSession, nsPerDecision: stats(rounds) };
}

type KafkaClient = Config['kafkaClient'];

interface RestoreRun {
  client: KafkaClient;
  sessions: number;
  readyMs: number;
  /** heapUsed after GC ÷ sessions, right after the restore (before any session is touched). */
  heapBytesPerSession: number;
  /** heapUsed + arrayBuffers (the kept state bytes live outside the JS heap) ÷ sessions. */
  keptBytesPerSession: number;
  /** Sessions still kept as bytes right after the restore. */
  serialized: number;
  /** Every session touched once (decoded as on its first event): µs per session. */
  touchUsPerSession: number;
  /** heapUsed + arrayBuffers after GC ÷ sessions once every session was touched. */
  touchedBytesPerSession: number;
  kcatReadMs: number;
}

async function writeChangelog(env: Env, n: number): Promise<string> {
  const topic = `bench-changelog-${n}-${Date.now()}`;
  await createTopic(env.admin, topic, PARTITIONS, true);
  const chunk = 50_000;
  let ms = 0;
  for (let i = 0; i < n; i += chunk) {
    const messages: Message[] = [];
    for (let k = i; k < Math.min(n, i + chunk); k++)
      messages.push({ key: `sess-${k}`, value: typical.bytes, partition: k % PARTITIONS });
    ms += await preload(env.kafka, topic, messages);
  }
  console.error(
    `wrote ${fmt(n)} changelog records (${typical.bytes.length} B each) to ${topic} in ${ms} ms`,
  );
  return topic;
}

async function kcatRead(env: Env, topic: string, n: number): Promise<number> {
  const t = Date.now();
  await new Promise<void>((resolve, reject) => {
    const p = spawn(
      'bash',
      [
        '-c',
        `kcat -C -b ${env.services.brokers.join(',')} -t ${topic} -o beginning -e -q -f '%k%s' > /dev/null`,
      ],
      {
        stdio: 'inherit',
      },
    );
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kcat exited ${code}`))));
  });
  void n;
  return Date.now() - t;
}

async function restoreOnce(
  env: Env,
  changelog: string,
  n: number,
  client: KafkaClient,
): Promise<RestoreRun> {
  const c = benchConfig(env, {
    changelogTopic: changelog,
    partitions: PARTITIONS,
    kafkaClient: client,
  });
  await createTopic(env.admin, c.inputTopic, PARTITIONS);
  const before = await settledMemory();
  const t = Date.now();
  const running = await startProcessor(c, pino({ level: 'silent' }));
  while (!running.processor.isReady()) await sleep(10);
  const readyMs = Date.now() - t;
  const count = running.processor.sessionCount();
  if (count !== n) throw new Error(`restored ${count} sessions, expected ${n}`);
  const kept = await settledMemory();
  const perSession = (m: NodeJS.MemoryUsage) =>
    (m.heapUsed + m.arrayBuffers - before.heapUsed - before.arrayBuffers) / n;
  let serialized = 0;
  for (const w of running.processor.partitions().values()) serialized += w.sessions.serializedCount;
  // First touch, as a session's first event does it (decode, then keep the decoded state).
  const t1 = process.hrtime.bigint();
  for (const w of running.processor.partitions().values()) {
    for (const id of [...w.sessions.sessionIds()]) w.sessions.set(id, w.sessions.owned(id)!);
  }
  const touchUsPerSession = Number(process.hrtime.bigint() - t1) / 1000 / n;
  const touched = await settledMemory();
  await running.stop();
  return {
    client,
    sessions: n,
    readyMs,
    heapBytesPerSession: (kept.heapUsed - before.heapUsed) / n,
    keptBytesPerSession: perSession(kept),
    serialized,
    touchUsPerSession,
    touchedBytesPerSession: perSession(touched),
    kcatReadMs: await kcatRead(env, changelog, n),
  };
}

async function main(): Promise<void> {
  const m0 = machine();
  const engine: EngineRow[] = [];
  for (const n of ENGINE_SIZES) {
    const t = Date.now();
    const row = engineAt(n);
    engine.push(row);
    console.error(
      `engine ${fmt(n)} sessions: heap ${fmt(row.heapBytesPerSession)} B/session, ${fmt(row.nsPerDecision.median)} ns/decision (min ${fmt(row.nsPerDecision.min)}, max ${fmt(row.nsPerDecision.max)}) [${Date.now() - t} ms]`,
    );
  }
  const restores: RestoreRun[] = [];
  if (RESTORE_SIZES.length > 0) {
    const env = await openEnv();
    try {
      for (const n of RESTORE_SIZES) {
        const topic = await writeChangelog(env, n);
        const runs = n >= 1_000_000 ? RUNS_LARGE : RUNS;
        for (let r = 1; r <= runs; r++)
          for (const client of CLIENTS) {
            const res = await restoreOnce(env, topic, n, client);
            restores.push(res);
            console.error(
              `restore ${fmt(n)} (${client}) run ${r}/${runs}: ready in ${fmt(res.readyMs)} ms (${fmt(n / (res.readyMs / 1000))} sessions/s), heap ${fmt(res.heapBytesPerSession)} B/session, heap + arrayBuffers ${fmt(res.keptBytesPerSession)} B/session (${fmt(res.serialized)} kept as bytes); touching each once ${fmt(res.touchUsPerSession, 1)} µs/session, then ${fmt(res.touchedBytesPerSession)} B/session; kcat reads the changelog in ${fmt(res.kcatReadMs)} ms`,
            );
          }
        await env.admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      }
    } finally {
      await env.stop();
    }
  }
  const m1 = machine();
  console.log(
    `\n## memory and restore: typical session state ${typical.bytes.length} B serialized`,
  );
  console.log(
    `machine: ${describeMachine(m0)} (before); load avg after ${(m1.loadavg as number[]).join(' ')}\n`,
  );
  console.log(
    '| sessions | heap B/session (engine, after GC) | ns/decision (median of 5 rounds of ' +
      fmt(DECISIONS) +
      ' random sessions) | min | max | ÷ smallest |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const r of engine) {
    console.log(
      `| ${fmt(r.sessions)} | ${fmt(r.heapBytesPerSession)} | ${fmt(r.nsPerDecision.median)} | ${fmt(r.nsPerDecision.min)} | ${fmt(r.nsPerDecision.max)} | ${fmt(r.nsPerDecision.median / engine[0]!.nsPerDecision.median, 2)} |`,
    );
  }
  if (restores.length > 0) {
    console.log(
      '\n| sessions restored | client | runs | startProcessor → ready, ms (median) | min | max | sessions/s | B/session kept (heap + arrayBuffers) | heap B/session | first touch µs/session | B/session after touch | kcat reads the changelog, ms | ready ÷ kcat |',
    );
    console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const n of RESTORE_SIZES)
      for (const client of CLIENTS) {
        const rs = restores.filter((x) => x.sessions === n && x.client === client);
        const s = stats(rs.map((x) => x.readyMs));
        const k = stats(rs.map((x) => x.kcatReadMs)).median;
        const med = (f: (x: RestoreRun) => number) => stats(rs.map(f)).median;
        console.log(
          `| ${fmt(n)} | ${client} | ${rs.length} | ${fmt(s.median)} | ${fmt(s.min)} | ${fmt(s.max)} | ${fmt(n / (s.median / 1000))} | ${fmt(med((x) => x.keptBytesPerSession))} | ${fmt(med((x) => x.heapBytesPerSession))} | ${fmt(
            med((x) => x.touchUsPerSession),
            1,
          )} | ${fmt(med((x) => x.touchedBytesPerSession))} | ${fmt(k)} | ${fmt(s.median / k, 1)} |`,
        );
      }
  }
  const file = saveResult('restore', {
    machine: { before: m0, after: m1 },
    typicalStateBytes: typical.bytes.length,
    engine,
    restores,
  });
  console.error(`\nresult: ${file}`);
}

runMain(main);
