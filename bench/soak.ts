/**
 * Soak: the processor on a local 3-node cluster (RF 3, min.insync.replicas 2) at a
 * steady input rate for a long time, with a broker fault every few minutes, cycling through
 * kill -9 of the input partitions' leader, of the transaction coordinator, of the group
 * coordinator, of the changelog leader, a SIGSTOP beyond the session and replica lag timeouts,
 * and a rolling restart. Reports per window: input events committed per second, verdict
 * latency p99 (decidedAt − requestedAt of the committed verdicts decided in that window; the
 * events are stamped with the wall clock when sent), the processor's RSS; and at the end the
 * lost and duplicated outputs against the offline audit of the input as delivered.
 *
 *   npm run bench:soak                          # 30 min, 150 events/s, a fault every 3 min
 *   npm run bench:soak -- --minutes 5 --fault-every 60
 *
 * Options: --minutes (30), --rate events/s (150), --sessions (300), --fault-every seconds
 * (180), --window seconds (60), --client (CG_KAFKA_CLIENT: kafkajs, or platformatic, whose one
 * transactional producer per process gets a fixed instance id so that the fault on the
 * transaction coordinator hits its coordinator). One processor, a child process as deployed
 * (bench/processor-child.ts); the registry: SCHEMA_REGISTRY_URL or a local one.
 */
import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type TopicMessages } from 'kafkajs';
import pino from 'pino';
import { DEFAULTS, loadConfig } from '../src/config/config';
import type { ContextEvent } from '../src/engine/events';
import { stampNow } from '../src/cli/simulate';
import { checkedSend, UnacknowledgedSendError } from '../src/kafka/kafkajs/checkedSend';
import { processTransactionalId } from '../src/kafka/producers';
import { transactionalId } from '../src/kafka/transaction';
import {
  coordinatorPartition,
  startLocalKafkaCluster,
  type LocalKafkaCluster,
} from '../src/services/localCluster';
import { startLocalRegistry } from '../src/services/localRegistry';
import { cacheDir, DEFAULT_KAFKA_VERSION, DEFAULT_REGISTRY_VERSION } from '../src/services/maven';
import { generateFleetArray } from '../src/sim';
import {
  benchConfig,
  machine,
  option,
  percentile,
  runMain,
  saveResult,
  sleep,
  spawnProcessor,
  type Env,
} from './kafka-common';

const MINUTES = Number(option('minutes') ?? 30);
const RATE = Number(option('rate') ?? 150);
const SESSIONS = Number(option('sessions') ?? 300);
const FAULT_EVERY_S = Number(option('fault-every') ?? 180);
const WINDOW_S = Number(option('window') ?? 60);
// Read as CG_KAFKA_CLIENT is (its settings row): a misspelt client is refused, not run.
const CLIENT = loadConfig({ CG_KAFKA_CLIENT: option('client') ?? 'kafkajs' }).kafkaClient;
// Retention of a closed session: the contract's grace (event time), then the sweep delay. The
// defaults keep one for 2 hours; shorter ones let a 30-40 minute run reach the steady state
// where sessions are freed as fast as they close, so RSS can be judged flat or not.
const GRACE_MIN = Number(option('grace-minutes') ?? DEFAULTS.graceMs / 60_000);
const SWEEP_MIN = Number(option('sweep-minutes') ?? DEFAULTS.sweepDelayMs / 60_000);

interface Sample {
  at: number;
  committed: number;
  rssMb: number;
}

function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

type Fault = { name: string; run(cluster: LocalKafkaCluster): Promise<string> };

async function main(): Promise<void> {
  const started = Date.now();
  const cache = cacheDir();
  const cluster = await startLocalKafkaCluster({
    cacheDir: cache,
    version: DEFAULT_KAFKA_VERSION,
    startTimeoutMs: 240_000,
  });
  const registry =
    process.env.SCHEMA_REGISTRY_URL === undefined
      ? await startLocalRegistry({
          cacheDir: cache,
          version: DEFAULT_REGISTRY_VERSION,
          startTimeoutMs: 240_000,
        })
      : undefined;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL ?? registry!.url;
  process.env.KAFKA_BROKERS = cluster.brokers.join(',');
  process.env.SCHEMA_REGISTRY_URL = registryUrl;
  process.env.CG_TEST_KAFKA_LOG = 'nothing';
  const kafka = new Kafka({
    clientId: 'cg-soak',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const env = { services: { brokers: cluster.brokers, registryUrl } } as unknown as Env;
  const c = benchConfig(env, {
    partitions: 3,
    sessionTimeoutMs: 6_000,
    transactionTimeoutMs: 5_000,
    graceMs: GRACE_MIN * 60_000,
    sweepDelayMs: SWEEP_MIN * 60_000,
    kafkaClient: CLIENT,
    instanceId: 'soak',
  });
  // Partition 0's transactions: its own producer's on kafkajs, the process's on platformatic.
  const txnId =
    CLIENT === 'kafkajs' ? transactionalId(c, 0) : processTransactionalId(c, c.instanceId!);
  const H = await import('../test/integration/faults/harness');
  const child = await spawnProcessor(c, [], {
    CG_BENCH_LOG_FILE: `/tmp/cg-soak-${process.pid}.log`,
  });
  const pid = child.proc.pid!;
  const leader = async (topic: string, partition: number) =>
    (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.find(
      (p) => p.partitionId === partition,
    )!.leader;
  const killAndRestart = async (id: number, what: string) => {
    const node = cluster.node(id);
    await node.kill();
    await sleep(10_000);
    await node.start();
    return `kill -9 node ${id} (${what}), restarted 10 s later`;
  };
  const faults: Fault[] = [
    {
      name: 'input leader kill -9',
      run: async () => killAndRestart(await leader(c.inputTopic, 0), 'input leader'),
    },
    {
      name: 'transaction coordinator kill -9',
      run: async () =>
        killAndRestart(
          await leader('__transaction_state', coordinatorPartition(txnId, 3)),
          'transaction coordinator',
        ),
    },
    {
      name: 'group coordinator kill -9',
      run: async () =>
        killAndRestart(
          await leader('__consumer_offsets', coordinatorPartition(c.groupId, 3)),
          'group coordinator',
        ),
    },
    {
      name: 'SIGSTOP 16 s',
      run: async (k) => {
        const node = k.node(await leader(c.inputTopic, 1));
        node.pause();
        await sleep(16_000);
        node.resume();
        return `SIGSTOP node ${node.id} for 16 s`;
      },
    },
    {
      name: 'changelog leader kill -9',
      run: async () => killAndRestart(await leader(c.changelogTopic, 2), 'changelog leader'),
    },
    {
      name: 'rolling restart',
      run: async (k) => {
        for (const node of k.nodes) {
          await node.restart();
          await k.waitHealthy([c.inputTopic, c.changelogTopic], 120_000);
        }
        return 'rolling restart of the 3 nodes';
      },
    },
  ];

  const total = Math.round(MINUTES * 60 * RATE);
  const { events } = generateFleetArray({
    sessions: SESSIONS,
    events: total,
    seed: 2026,
    faultyShare: 0.3,
  });
  console.error(
    `soak: ${MINUTES} min at ${RATE} events/s (${total} events, ${SESSIONS} sessions live), a fault every ${FAULT_EVERY_S} s, closed sessions kept ${GRACE_MIN} + ${SWEEP_MIN} min`,
  );
  const samples: Sample[] = [];
  const faultLog: { at: number; what: string; tookMs: number }[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      try {
        const [t] = await admin.fetchOffsets({ groupId: c.groupId, topics: [c.inputTopic] });
        const committed = (t?.partitions ?? []).reduce(
          (n, p) => n + Math.max(0, Number(p.offset)),
          0,
        );
        samples.push({ at: Date.now(), committed, rssMb: rssMb(pid) });
      } catch {
        // coordinator failing over: no sample this time
      }
      await sleep(5_000);
    }
  })();
  const injector = (async () => {
    for (let i = 0; running; i++) {
      const due = Date.now() + FAULT_EVERY_S * 1000;
      while (running && Date.now() < due) await sleep(1_000);
      if (!running) return;
      const f = faults[i % faults.length]!;
      const at = Date.now();
      const what = await f.run(cluster).catch((e: unknown) => `${f.name} failed: ${String(e)}`);
      faultLog.push({ at, what, tookMs: Date.now() - at });
      console.error(`soak: +${Math.round((at - started) / 1000)} s ${what}`);
    }
  })();

  // Steady load: a batch every 100 ms, stamped with the wall clock when sent.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 10 },
  });
  await producer.connect();
  // Each send checked partition by partition (kafkajs#1303: sends that resolved lost input
  // events on the cluster); partitions left unacknowledged after its re-sends go again alone.
  const partitionCounts = new Map([
    [
      c.inputTopic,
      (await admin.fetchTopicMetadata({ topics: [c.inputTopic] })).topics[0]!.partitions.length,
    ],
  ]);
  const sendLog = pino({ level: 'warn' }, pino.destination(2));
  const loadStart = Date.now();
  let resends = 0;
  let partlyUnacknowledgedSends = 0;
  let duplicatedInputPartitions = 0;
  const perTick = Math.max(1, Math.round(RATE / 10));
  for (let i = 0, tick = 0; i < events.length; i += perTick, tick++) {
    const messages = events.slice(i, i + perTick).map((e) => {
      const s: ContextEvent = stampNow(e);
      return { key: s.sessionId, value: JSON.stringify(s) };
    });
    let pending: TopicMessages[] = [{ topic: c.inputTopic, messages }];
    for (;;) {
      try {
        const sent = await checkedSend(producer, pending, { partitionCounts, log: sendLog });
        if (sent.rounds > 1) partlyUnacknowledgedSends++;
        duplicatedInputPartitions += sent.repeated.length;
        break;
      } catch (e) {
        resends++;
        if (e instanceof UnacknowledgedSendError) pending = e.unsent;
        await sleep(500);
      }
    }
    const next = loadStart + (tick + 1) * 100;
    if (next > Date.now()) await sleep(next - Date.now());
  }
  await producer.disconnect();
  const loadMs = Date.now() - loadStart;
  running = false;
  await injector;
  for (const n of cluster.nodes) if (!n.running) await n.start();
  await H.waitAllCommitted(c, 600_000);
  await sampler;
  const delivered = await H.deliveredInput(c, events.length);
  const r = await H.exactlyOnce(c, delivered, 600_000);
  const rssEnd = rssMb(pid);
  await child.stop();

  // Per window: throughput from the committed offsets, p99 from the verdicts decided then.
  const windows: {
    minute: number;
    eventsPerS: number;
    verdictP99Ms: number | null;
    verdicts: number;
    rssMb: number;
  }[] = [];
  const latencies = r.decoded.flatMap((v) =>
    v.record === 'verdict' && v.requestedAt !== null
      ? [{ at: v.decidedAt, ms: v.decidedAt - v.requestedAt }]
      : [],
  );
  for (let w = loadStart; w < loadStart + loadMs; w += WINDOW_S * 1000) {
    const inW = samples.filter((s) => s.at >= w && s.at < w + WINDOW_S * 1000);
    // The load's last few hundred ms can open a window that no sample falls in.
    if (inW.length < 2) continue;
    const first = inW[0];
    const last = inW[inW.length - 1];
    const ms = latencies
      .filter((l) => l.at >= w && l.at < w + WINDOW_S * 1000)
      .map((l) => l.ms)
      .sort((a, b) => a - b);
    windows.push({
      minute: Math.round((w - loadStart) / 60_000),
      eventsPerS:
        first && last && last.at > first.at
          ? Math.round(((last.committed - first.committed) * 1000) / (last.at - first.at))
          : 0,
      verdictP99Ms: ms.length > 0 ? Math.round(percentile(ms, 99)) : null,
      verdicts: ms.length,
      rssMb: Math.round(last?.rssMb ?? NaN),
    });
  }
  const result = {
    client: CLIENT,
    minutes: MINUTES,
    rate: RATE,
    sessions: SESSIONS,
    faultEveryS: FAULT_EVERY_S,
    graceMinutes: GRACE_MIN,
    sweepMinutes: SWEEP_MIN,
    events: delivered.length,
    resends,
    partlyUnacknowledgedSends,
    duplicatedInputPartitions,
    loadSeconds: Math.round(loadMs / 1000),
    faults: faultLog.map((f) => ({
      atS: Math.round((f.at - loadStart) / 1000),
      what: f.what,
      tookMs: f.tookMs,
    })),
    windows,
    rssStartMb: Math.round(samples[0]?.rssMb ?? NaN),
    rssEndMb: Math.round(rssEnd),
    ...H.exactlyOnceFigures(r),
    totalSeconds: Math.round((Date.now() - started) / 1000),
    machine: machine(`${DEFAULT_KAFKA_VERSION} (local KRaft, 3 nodes, RF 3, min ISR 2)`),
  };
  console.log(JSON.stringify(result, null, 2));
  console.error(`soak: result in ${saveResult('soak', result)}`);
  console.error('minute  events/s  verdict p99 ms  verdicts  RSS MB');
  for (const w of windows)
    console.error(
      `${String(w.minute).padStart(6)}  ${String(w.eventsPerS).padStart(8)}  ${String(w.verdictP99Ms ?? '-').padStart(14)}  ${String(w.verdicts).padStart(8)}  ${String(w.rssMb).padStart(6)}`,
    );
  console.error(`lost ${r.lost}, duplicated ${r.duplicated} of ${r.records} output records`);
  await admin.disconnect();
  await cluster.stop();
  await registry?.stop();
  if (r.lost !== 0 || r.duplicated !== 0)
    throw new Error(`not exactly once: lost ${r.lost}, duplicated ${r.duplicated}`);
}

runMain(main);
