/**
 * End-to-end benchmark with Kafka: events/s from a pre-loaded input topic to
 * committed outputs, all paths on the same broker reading the same bytes (JSON input events,
 * keyed by sessionId, 6 partitions):
 *
 *   kcat pipe      kcat -C (from the beginning, exit at the end) | kcat -P: no processing
 *   consume-only   kafkajs consumer alone, no decode, no output (autoCommit): the ceiling of
 *                  any kafkajs-based processor reading this topic
 *   consume-only-alt  only with --alt-config: the processor's own group consumer (src/kafka/
 *                  transport) on product-alt's settings (its kafkaClient), records counted and
 *                  resolved, no decode, no output, no commit: the ceiling of product-alt's reading
 *   passthrough    kafkajs consumer -> kafkajs idempotent producer, no decode, no engine
 *   (every kafkajs consumer here fetches as the processor does: CG_MAX_BYTES_PER_PARTITION, CG_FETCH_MAX_BYTES and
 *   CG_PARTITIONS_CONCURRENTLY defaults)
 *   plain          bench-only pipeline: decodeRecord -> evolve -> outputMessage + serializeState
 *                  (changelog) -> idempotent producer, autoCommit consumer: the product's work
 *                  WITHOUT transactions ("EOS off"; the processor itself has no such switch)
 *   eos-bench      the same bench pipeline with the processor's EOS protocol (one transactional
 *                  producer per partition, one transaction per batch with sendOffsets): timed
 *                  per stage, to show where the product's time goes
 *   product-uncached  the product with CG_COORDINATOR_CACHE=false (kafkajs' FindCoordinator
 *                  before 4 of each transaction's requests): the coordinator cache's effect
 *   product        the real processor (startProcessor, EOS) in a child process of its own
 *   product-alt    only with --alt-config k=v,..., --alt-node-args "ARGS" and/or --alt-env
 *                  "K=V ...": the product with those settings on top of --config, those Node
 *                  options and environment variables, for a same-run A/B of a setting
 *
 * Beside events/s, each path's CPU over its drain (cpuMeter.ts): its process's and its main
 * thread's per event, how busy that thread was, and the machine's busy cores.
 *
 *   npm run bench:e2e                 # 200k events, 3 runs
 *   npm run bench:e2e -- --quick      # 3k events, 1 run
 *   npm run bench:e2e -- --events 100000 --runs 5 --skip product
 *   npm run bench:e2e -- --format avro --skip plain,eos-bench   # Avro input (no kcat pipe)
 *   npm run bench:e2e -- --cpu-prof /tmp/prof --skip kcat,passthrough,plain,eos-bench
 *   npm run bench:e2e -- --skip plain,eos-bench --config maxBytesPerPartition=4194304
 *   npm run bench:e2e -- --skip plain,eos-bench,product-uncached --alt-config maxBytesPerPartition=4194304
 */
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as readline from 'node:readline';
import type { Batch, Message, Producer } from 'kafkajs';
import { DEFAULTS, type Config } from '../src/config/config';
import { evolve } from '../src/engine/evolve';
import { engineOptions } from '../src/engine/fleet';
import { serializeState } from '../src/engine/serialize';
import type { SessionState } from '../src/engine/state';
import { transportFor } from '../src/cli/run';
import { createLogger } from '../src/config/redact';
import { connectionOptions } from '../src/kafka/client';
import { inputConsumerOptions } from '../src/kafka/processor';
import { cacheTransactionCoordinators } from '../src/kafka/kafkajs/coordinatorCache';
import { outputRequests } from '../src/kafka/outputChunks';
import { decodeRecord, outputMessage } from '../src/kafka/records';
import { RegistryCodec } from '../src/registry/codec';
import { generateFleetArray } from '../src/sim';
import { type CpuSpent, cpuSince, cpuSnapshot } from './cpuMeter';
import {
  benchConfig,
  configFromArgs,
  createTopic,
  describeMachine,
  type Env,
  flag,
  fmt,
  machine,
  openEnv,
  option,
  peakRssMb,
  counterOf,
  preload,
  type Published,
  publishedByMetrics,
  publishedMismatch,
  publishedOffline,
  saveResult,
  spawnProcessor,
  stats,
  topicEnd,
  waitCommitted,
  runMain,
  registerAll,
} from './kafka-common';

const QUICK = flag('quick');
const EVENTS = Number(option('events') ?? (QUICK ? 3_000 : 200_000));
// ~100 events per session, as bench:engine's mix (a fleet with far more sessions than that makes few requests).
const SESSIONS = Number(option('sessions') ?? (QUICK ? 30 : 2_000));
/** json (default: all paths, kcat included, read the same bytes) or avro (the Confluent wire format; no kcat pipe). */
const FORMAT = (option('format') ?? 'json') as 'json' | 'avro';
/** A V8 CPU profile of the product child per run, into this directory (see bench/cpuprofile-summary.ts). */
const CPU_PROF = option('cpu-prof');
const RUNS = Number(option('runs') ?? (QUICK ? 1 : 3));
const PARTITIONS = 6;
const SKIP = new Set((option('skip') ?? '').split(',').filter(Boolean));
const TIMEOUT_MS = Number(option('timeout-ms') ?? 180_000);
/** Product settings for tuning studies, as in bench:latency: `--config maxBytesPerPartition=4194304`. */
const PRODUCT_CONFIG = configFromArgs(option('config'));

type Variant =
  | 'kcat'
  | 'consume-only'
  | 'consume-only-alt'
  | 'passthrough'
  | 'plain'
  | 'eos-bench'
  | 'product-uncached'
  | 'product'
  | 'product-alt';
const ALT_CONFIG = option('alt-config');
const ALT_NODE_ARGS = (option('alt-node-args') ?? '').split(' ').filter(Boolean);
/** `--alt-env "K=V K2=V2"`: environment variables of the product-alt child only. */
const ALT_ENV = Object.fromEntries(
  (option('alt-env') ?? '')
    .split(' ')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const VARIANTS: Variant[] = [
  'kcat',
  'consume-only',
  ...(ALT_CONFIG ? (['consume-only-alt'] as const) : []),
  'passthrough',
  'plain',
  'eos-bench',
  'product-uncached',
  'product',
  ...(ALT_CONFIG || ALT_NODE_ARGS.length > 0 || Object.keys(ALT_ENV).length > 0
    ? (['product-alt'] as const)
    : []),
];

interface RunResult {
  variant: Variant;
  /** From the consumer's start (group joined / processor ready / kcat spawned) to all outputs committed. */
  drainMs: number;
  /** Including the start-up (group join, restore of an empty changelog, producers). */
  totalMs: number;
  outputs: number;
  stages?: Record<string, number>;
  /** The processor child's peak resident set (product paths). */
  peakRssMb?: number;
  /** Product paths: the transactions the broker saw, committed (barriers included). */
  kafkaTransactions?: number;
  /** Product paths: batch transactions committed (one per partition's batch or its budget). */
  batchTransactions?: number;
  /** Product paths: offsets taken in the changelog (records, tombstones and commit markers). */
  changelogOffsets?: number;
  /** CPU over the drain: the machine's, and the path's own process (cpuMeter.ts). */
  cpu?: CpuSpent;
}

async function kcatPipe(env: Env, input: string): Promise<RunResult> {
  const out = `bench-kcat-out-${Date.now()}`;
  await createTopic(env.admin, out, PARTITIONS);
  const b = env.services.brokers.join(',');
  const started = Date.now();
  const before = cpuSnapshot();
  // bash's `time` gives the CPU of both kcat processes (all their threads) on its own line.
  const kcatCpuMs = await new Promise<number>((resolve, reject) => {
    const p = spawn(
      'bash',
      [
        '-c',
        `TIMEFORMAT='${KCAT_CPU} %3U %3S'; time (set -o pipefail; kcat -C -b ${b} -t ${input} -o beginning -e -q -f '%k\\t%s\\n' | kcat -P -b ${b} -t ${out} -K '\\t' -X acks=all -X enable.idempotence=true)`,
      ],
      { stdio: ['ignore', 'inherit', 'pipe'] },
    );
    let cpuMs = NaN;
    readline.createInterface({ input: p.stderr! }).on('line', (line) => {
      const [tag, user, sys] = line.split(' ');
      if (tag === KCAT_CPU) cpuMs = (Number(user) + Number(sys)) * 1000;
      else console.error(line);
    });
    p.once('close', (code) =>
      code === 0 ? resolve(cpuMs) : reject(new Error(`kcat pipe exited with ${code}`)),
    );
  });
  const ms = Date.now() - started;
  const cpu = { ...cpuSince(before, cpuSnapshot()), processMs: kcatCpuMs, mainThreadMs: NaN };
  return {
    variant: 'kcat',
    drainMs: ms,
    totalMs: ms,
    outputs: await topicEnd(env.admin, out),
    cpu,
  };
}

const KCAT_CPU = 'cg-kcat-cpu';

/**
 * Drains the input with a kafkajs consumer that fetches as the processor does, until its group
 * has committed every input offset. drainMs counts from the first GROUP_JOIN, totalMs from the
 * call (group join included).
 */
async function drainWithConsumer(
  env: Env,
  groupId: string,
  input: string,
  eachBatch: (batch: Batch) => Promise<void>,
  autoCommit: boolean,
): Promise<{ drainMs: number; totalMs: number; cpu: CpuSpent }> {
  const started = Date.now();
  let joined = 0;
  let atJoin = cpuSnapshot(process.pid);
  const consumer = env.kafka.consumer({
    groupId,
    readUncommitted: false,
    maxBytesPerPartition: DEFAULTS.maxBytesPerPartition,
    maxBytes: DEFAULTS.fetchMaxBytes,
  });
  consumer.on(consumer.events.GROUP_JOIN, () => {
    if (joined !== 0) return;
    joined = Date.now();
    atJoin = cpuSnapshot(process.pid);
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: input, fromBeginning: true });
    await consumer.run({
      autoCommit,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: DEFAULTS.partitionsConsumedConcurrently,
      eachBatch: ({ batch }) => eachBatch(batch),
    });
    const done = await waitCommitted(env.admin, groupId, input, TIMEOUT_MS, 50);
    const cpu = cpuSince(atJoin, cpuSnapshot(process.pid));
    return { drainMs: done - joined, totalMs: done - started, cpu };
  } finally {
    await consumer.disconnect();
  }
}

async function consumeOnly(env: Env, input: string): Promise<RunResult> {
  const c = benchConfig(env);
  let records = 0;
  const times = await drainWithConsumer(
    env,
    c.groupId,
    input,
    async (batch) => {
      records += batch.messages.length;
    },
    true,
  );
  return { variant: 'consume-only', ...times, outputs: records };
}

/**
 * The processor's group consumer, on product-alt's settings (with --alt-config
 * kafkaClient=platformatic, the platformatic consumer exactly as the processor reads), alone:
 * from the group's join to the last input record handed over. It commits nothing (the
 * processor commits in its transactions), so the end is its own count of the records.
 */
async function consumeOnlyAlt(env: Env, input: string): Promise<RunResult> {
  const c = benchConfig(env, {
    ...PRODUCT_CONFIG,
    ...configFromArgs(ALT_CONFIG),
    inputTopic: input,
    partitions: PARTITIONS,
  });
  const log = createLogger('error');
  const transport = await transportFor(c, connectionOptions(c.brokers, c.clientId, log, c));
  const consumer = transport.groupConsumer(inputConsumerOptions(c));
  const started = Date.now();
  let joined = 0;
  let atJoin = cpuSnapshot(process.pid);
  let records = 0;
  let done!: (at: number) => void;
  let failed!: (e: unknown) => void;
  const finished = new Promise<number>((res, rej) => ((done = res), (failed = rej)));
  const timer = setTimeout(
    () =>
      failed(new Error(`consume-only-alt: ${records} of ${EVENTS} records in ${TIMEOUT_MS} ms`)),
    TIMEOUT_MS,
  );
  try {
    await consumer.start({
      revoked: () => undefined,
      assigned: () => {
        if (joined !== 0) return;
        joined = Date.now();
        atJoin = cpuSnapshot(process.pid);
      },
      batch: async (batch, control) => {
        records += batch.messages.length;
        if (batch.messages.length > 0) control.resolveOffset(batch.lastOffset());
        if (records >= EVENTS) done(Date.now());
      },
      crashed: (e, restart) => void (restart || failed(e)),
    });
    const at = await finished;
    const cpu = cpuSince(atJoin, cpuSnapshot(process.pid));
    return {
      variant: 'consume-only-alt',
      drainMs: at - joined,
      totalMs: at - started,
      outputs: records,
      cpu,
    };
  } finally {
    clearTimeout(timer);
    await consumer.stop();
  }
}

async function passthrough(env: Env, input: string): Promise<RunResult> {
  const c = benchConfig(env);
  const out = c.verdictTopic;
  await createTopic(env.admin, out, PARTITIONS);
  const producer = env.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const times = await drainWithConsumer(
    env,
    c.groupId,
    input,
    async (batch) => {
      const messages: Message[] = batch.messages.map((m) => ({ key: m.key, value: m.value }));
      // A fetched batch (up to CG_MAX_BYTES_PER_PARTITION) can be over the broker's 1 MiB record
      // batch limit: split as the processor does (src/kafka/outputChunks.ts).
      for (const topicMessages of outputRequests([[out, messages]]))
        await producer.sendBatch({ acks: -1, topicMessages });
    },
    true,
  );
  await producer.disconnect();
  return { variant: 'passthrough', ...times, outputs: await topicEnd(env.admin, out) };
}

/** The product's per-batch work, optionally with its EOS protocol, timed per stage. */
async function pipeline(env: Env, input: string, eos: boolean): Promise<RunResult> {
  const c: Config = benchConfig(env, { inputTopic: input });
  for (const t of [c.verdictTopic, c.spillTopic, c.auditTopic])
    await createTopic(env.admin, t, PARTITIONS);
  await createTopic(env.admin, c.changelogTopic, PARTITIONS, true);
  const codec = RegistryCodec.fromConfig(c);
  await registerAll(codec);
  const engine = engineOptions({ graceMs: c.graceMs });
  // As the processor does (CG_COORDINATOR_CACHE, default on); only transactional producers.
  if (eos && c.coordinatorCache) cacheTransactionCoordinators(env.kafka);
  const states = new Map<number, Map<string, SessionState>>();
  const producers = new Map<number, Producer>();
  const plain = env.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await plain.connect();
  const stages = {
    decode: 0,
    engine: 0,
    encode: 0,
    send: 0,
    sendOffsets: 0,
    commit: 0,
    batches: 0,
  };
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const producerFor = async (p: number): Promise<Producer> => {
    let pr = producers.get(p);
    if (!pr) {
      pr = env.kafka.producer({
        transactionalId: `${c.groupId}-${input}-${p}`,
        idempotent: true,
        maxInFlightRequests: 1,
        transactionTimeout: c.transactionTimeoutMs,
        allowAutoTopicCreation: false,
      });
      producers.set(p, pr);
      await pr.connect();
    }
    return pr;
  };
  const times = await drainWithConsumer(
    env,
    c.groupId,
    input,
    async (batch) => {
      let st = states.get(batch.partition);
      if (!st) states.set(batch.partition, (st = new Map()));
      const overlay = new Map<string, SessionState>();
      const sends = new Map<string, Message[]>();
      const emit = (topic: string, m: Message) => {
        const l = sends.get(topic);
        if (l) l.push(m);
        else sends.set(topic, [m]);
      };
      for (const m of batch.messages) {
        let t = now();
        const decoded = await decodeRecord(
          { key: m.key, value: m.value, offset: m.offset },
          c.inputFormat,
          codec,
        );
        stages.decode += now() - t;
        const inp = decoded.ok ? decoded.input : decoded.answer;
        if (!inp) continue;
        t = now();
        const r = evolve(
          overlay.get(inp.sessionId) ?? st.get(inp.sessionId),
          inp,
          Date.now(),
          engine,
        );
        if (r.state !== undefined) overlay.set(inp.sessionId, r.state);
        const t2 = now();
        stages.engine += t2 - t;
        for (const o of r.outputs) {
          const { topic, message } = outputMessage(o, codec, c);
          emit(topic, message);
        }
        stages.encode += now() - t2;
      }
      let t = now();
      for (const [sessionId, state] of overlay) {
        emit(c.changelogTopic, {
          key: sessionId,
          value: serializeState(state),
          partition: batch.partition,
        });
      }
      stages.encode += now() - t;
      const requests = outputRequests([...sends]); // as the processor sends them
      t = now();
      if (eos) {
        const txn = await (await producerFor(batch.partition)).transaction();
        for (const topicMessages of requests) await txn.sendBatch({ acks: -1, topicMessages });
        let t2 = now();
        stages.send += t2 - t;
        await txn.sendOffsets({
          consumerGroupId: c.groupId,
          topics: [
            {
              topic: input,
              partitions: [
                {
                  partition: batch.partition,
                  offset: (BigInt(batch.lastOffset()) + 1n).toString(),
                },
              ],
            },
          ],
        });
        t = now();
        stages.sendOffsets += t - t2;
        await txn.commit();
        t2 = now();
        stages.commit += t2 - t;
      } else {
        for (const topicMessages of requests) await plain.sendBatch({ acks: -1, topicMessages });
        stages.send += now() - t;
      }
      for (const [k, v] of overlay) st.set(k, v);
      stages.batches++;
    },
    !eos,
  );
  await Promise.all([plain, ...producers.values()].map((p) => p.disconnect()));
  codec.close();
  return {
    variant: eos ? 'eos-bench' : 'plain',
    ...times,
    outputs: await topicEnd(env.admin, c.verdictTopic),
    stages,
  };
}

/** What the offline engine publishes for the benchmark's events; set once they are generated. */
let expected: Published | null = null;

/**
 * A product run counts only if the processor published exactly what the offline engine does
 * for the same events: a run on reordered or lost input decides other things (SEQ_CONFLICT
 * audits, EVENT_GAP refusals) and is not the benchmark's workload.
 */
async function checkWorkload(variant: string, httpPort: number): Promise<void> {
  const diffs = await publishedMismatch(() => publishedByMetrics(httpPort), expected!);
  if (diffs.length > 0) {
    throw new Error(
      `${variant} published other outputs than the offline engine: ${diffs.join('; ')}`,
    );
  }
}

async function product(
  env: Env,
  input: string,
  variant: 'product' | 'product-uncached' | 'product-alt',
): Promise<RunResult> {
  const c = benchConfig(env, {
    ...PRODUCT_CONFIG,
    ...(variant === 'product-uncached' ? { coordinatorCache: false } : {}),
    ...(variant === 'product-alt' ? configFromArgs(ALT_CONFIG) : {}),
    inputTopic: input,
    partitions: PARTITIONS,
  });
  const started = Date.now();
  const child = await spawnProcessor(
    c,
    [
      ...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : []),
      ...(variant === 'product-alt' ? ALT_NODE_ARGS : []),
    ],
    variant === 'product-alt' ? ALT_ENV : {},
  );
  const atReady = cpuSnapshot(child.proc.pid);
  let cpu: CpuSpent | undefined;
  let done = NaN;
  let peakRss = NaN;
  let kafkaTransactions = NaN;
  let batchTransactions = NaN;
  try {
    done = await waitCommitted(env.admin, c.groupId, input, TIMEOUT_MS, 50);
    cpu = cpuSince(atReady, cpuSnapshot(child.proc.pid));
    await checkWorkload(variant, child.httpPort);
    peakRss = peakRssMb(child.proc.pid!);
    kafkaTransactions = await counterOf(
      child.httpPort,
      'kafka_transactions_total',
      'outcome="committed"',
    );
    batchTransactions = await counterOf(
      child.httpPort,
      'transactions_total',
      'outcome="committed"',
    );
  } catch (e) {
    // Recorded as a failed run (left out of the medians), not the end of the benchmark.
    console.error(`product run FAILED: ${(e as Error).message}`);
    done = NaN;
  }
  await child.stop();
  return {
    variant,
    drainMs: done - child.readyAt,
    totalMs: done - started,
    outputs: await topicEnd(env.admin, c.verdictTopic),
    peakRssMb: peakRss,
    kafkaTransactions,
    batchTransactions,
    changelogOffsets: await topicEnd(env.admin, c.changelogTopic),
    cpu,
  };
}

async function main(): Promise<void> {
  const env = await openEnv();
  try {
    const m0 = machine();
    const input = `bench-e2e-in-${Date.now()}`;
    await createTopic(env.admin, input, PARTITIONS);
    const t0 = Date.now();
    const { events } = generateFleetArray({
      sessions: SESSIONS,
      events: EVENTS,
      seed: 20_261_202,
      faultyShare: 0.1,
    });
    let encode = (e: (typeof events)[number]): Buffer | string => JSON.stringify(e);
    if (FORMAT === 'avro') {
      const codec = RegistryCodec.fromConfig(benchConfig(env, { inputTopic: input }));
      await registerAll(codec);
      encode = (e) => codec.encodeEvent(e);
      SKIP.add('kcat');
    }
    const messages: Message[] = events.map((e) => ({ key: e.sessionId, value: encode(e) }));
    const requests = events.filter((e) => e.type === 'CompactionRequested').length;
    expected = publishedOffline(events);
    const bytes = messages.reduce((n, x) => n + (x.value as string | Buffer).length, 0);
    console.error(
      `generated ${EVENTS} events (${requests} requests, ${SESSIONS} sessions, ${fmt(bytes / EVENTS)} B/event) in ${Date.now() - t0} ms`,
    );
    const loadMs = await preload(env.kafka, input, messages);
    console.error(`pre-loaded ${input} (${PARTITIONS} partitions) in ${loadMs} ms`);
    const runs: RunResult[] = [];
    for (let r = 1; r <= RUNS; r++) {
      for (const v of VARIANTS) {
        if (SKIP.has(v)) continue;
        const res =
          v === 'kcat'
            ? await kcatPipe(env, input)
            : v === 'consume-only'
              ? await consumeOnly(env, input)
              : v === 'consume-only-alt'
                ? await consumeOnlyAlt(env, input)
                : v === 'passthrough'
                  ? await passthrough(env, input)
                  : v === 'product' || v === 'product-uncached' || v === 'product-alt'
                    ? await product(env, input, v)
                    : await pipeline(env, input, v === 'eos-bench');
        runs.push(res);
        console.error(
          `run ${r}/${RUNS} ${v}: drain ${res.drainMs} ms (${fmt(EVENTS / (res.drainMs / 1000))} events/s), total ${res.totalMs} ms, ${res.outputs} outputs`,
        );
      }
    }
    const m1 = machine();
    const summary: Record<
      string,
      {
        eventsPerSec: ReturnType<typeof stats>;
        drainMs: ReturnType<typeof stats>;
        totalMs: ReturnType<typeof stats>;
        outputs: number;
        stagesUsPerEvent?: Record<string, number>;
        peakRssMb?: number;
        /** Per million input events: Kafka transactions, batch transactions, changelog offsets. */
        perMillion?: { kafkaTransactions: number; batchTransactions: number; changelog: number };
        /** Medians: CPU µs per event of the path's process and main thread; cores busy. */
        cpu?: {
          processUs: number;
          mainThreadUs: number;
          mainThreadBusy: number;
          machineCores: number;
        };
      }
    > = {};
    for (const v of VARIANTS) {
      const failed = runs.filter((x) => x.variant === v && !Number.isFinite(x.drainMs)).length;
      if (failed > 0)
        console.log(
          `${v}: ${failed} run(s) FAILED (not committed within ${TIMEOUT_MS} ms, or other outputs than the offline engine: see above), left out of the medians`,
        );
      const rs = runs.filter((x) => x.variant === v && Number.isFinite(x.drainMs));
      if (rs.length === 0) continue;
      const s: (typeof summary)[string] = {
        eventsPerSec: stats(rs.map((x) => EVENTS / (x.drainMs / 1000))),
        drainMs: stats(rs.map((x) => x.drainMs)),
        totalMs: stats(rs.map((x) => x.totalMs)),
        outputs: rs[0]!.outputs,
      };
      if (rs[0]!.peakRssMb !== undefined) s.peakRssMb = stats(rs.map((x) => x.peakRssMb!)).median;
      if (rs[0]!.kafkaTransactions !== undefined) {
        const perM = (f: (x: RunResult) => number) =>
          (stats(rs.map(f)).median * 1_000_000) / EVENTS;
        s.perMillion = {
          kafkaTransactions: perM((x) => x.kafkaTransactions!),
          batchTransactions: perM((x) => x.batchTransactions!),
          changelog: perM((x) => x.changelogOffsets!),
        };
      }
      if (rs[0]!.cpu !== undefined) {
        const median = (f: (c: CpuSpent, r: RunResult) => number) =>
          stats(rs.map((x) => f(x.cpu!, x))).median;
        s.cpu = {
          processUs: median((c) => (c.processMs * 1000) / EVENTS),
          mainThreadUs: median((c) => (c.mainThreadMs * 1000) / EVENTS),
          mainThreadBusy: median((c, r) => c.mainThreadMs / r.drainMs),
          machineCores: median((c) => c.machineCores),
        };
      }
      if (rs[0]!.stages) {
        const keys = Object.keys(rs[0]!.stages).filter((k) => k !== 'batches');
        s.stagesUsPerEvent = Object.fromEntries(
          keys.map((k) => [k, stats(rs.map((x) => (x.stages![k]! * 1000) / EVENTS)).median]),
        );
        s.stagesUsPerEvent.batches = stats(rs.map((x) => x.stages!.batches!)).median;
      }
      summary[v] = s;
    }
    const base = summary.kcat?.eventsPerSec.median ?? NaN; // NaN without kcat (--format avro)
    const pass = summary.passthrough?.eventsPerSec.median ?? NaN;
    console.log(
      `\n## e2e: ${EVENTS} ${FORMAT.toUpperCase()} events, ${SESSIONS} sessions, ${requests} requests, ${PARTITIONS} partitions, ${RUNS} runs`,
    );
    console.log(
      `machine: ${describeMachine(m0)} (before); load avg after ${(m1.loadavg as number[]).join(' ')}\n`,
    );
    console.log(
      '| path | events/s (median drain) | min | max | drain ms | total ms (with start-up) | ÷ kcat pipe | ÷ kafkajs pass-through | peak RSS MB |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [v, s] of Object.entries(summary)) {
      console.log(
        `| ${v} | ${fmt(s.eventsPerSec.median)} | ${fmt(s.eventsPerSec.min)} | ${fmt(s.eventsPerSec.max)} | ${fmt(s.drainMs.median)} | ${fmt(s.totalMs.median)} | ${fmt(s.eventsPerSec.median / base, 2)} | ${fmt(s.eventsPerSec.median / pass, 2)} | ${s.peakRssMb === undefined ? '–' : fmt(s.peakRssMb)} |`,
      );
    }
    const withCpu = Object.entries(summary).filter(([, s]) => s.cpu !== undefined);
    if (withCpu.length > 0) {
      console.log(
        `\n| path (CPU over the drain, medians) | wall µs/event | process CPU µs/event | main thread CPU µs/event | main thread busy, % of the drain | machine cores busy (of ${os.cpus().length}) |`,
      );
      console.log('|---|---:|---:|---:|---:|---:|');
      // kcat has no main thread of ours to read: a dash, not NaN.
      const or = (x: number, digits = 0) => (Number.isFinite(x) ? fmt(x, digits) : '–');
      for (const [v, s] of withCpu)
        console.log(
          `| ${v} | ${fmt(1e6 / s.eventsPerSec.median, 2)} | ${or(s.cpu!.processUs, 2)} | ${or(s.cpu!.mainThreadUs, 2)} | ${or(100 * s.cpu!.mainThreadBusy)} | ${or(s.cpu!.machineCores, 2)} |`,
        );
    }
    const perMillion = Object.entries(summary).filter(([, s]) => s.perMillion !== undefined);
    if (perMillion.length > 0) {
      console.log(
        '\n| path (per million input events) | Kafka transactions committed | batch transactions | changelog offsets (records, tombstones, markers) |',
      );
      console.log('|---|---:|---:|---:|');
      for (const [v, s] of perMillion)
        console.log(
          `| ${v} | ${fmt(s.perMillion!.kafkaTransactions)} | ${fmt(s.perMillion!.batchTransactions)} | ${fmt(s.perMillion!.changelog)} |`,
        );
    }
    for (const v of ['plain', 'eos-bench'] as const) {
      const st = summary[v]?.stagesUsPerEvent;
      if (!st) continue;
      const total = 1e6 / summary[v]!.eventsPerSec.median;
      const parts = Object.entries(st)
        .filter(([k]) => k !== 'batches')
        .map(([k, us]) => `${k} ${fmt(us, 1)} µs (${fmt((100 * us) / total)} %)`);
      console.log(
        `\n${v}: per event ${fmt(total, 1)} µs wall; ${parts.join(', ')}; ${fmt(st.batches!)} batches (${fmt(EVENTS / st.batches!)} events/batch)`,
      );
    }
    const file = saveResult('e2e', {
      format: FORMAT,
      machine: { before: m0, after: m1 },
      events: EVENTS,
      sessions: SESSIONS,
      requests,
      partitions: PARTITIONS,
      runs,
      summary,
    });
    console.error(`\nresult: ${file}`);
  } finally {
    await env.stop();
  }
}

runMain(main);
