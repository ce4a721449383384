/**
 * Verdict latency: p50/p99/p99.9 from a CompactionRequested produced to its verdict
 * visible to a read_committed consumer, at fixed request rates while 5× as many TurnAppended
 * flow. The real processor (startProcessor, EOS) runs in a child process of its own; this
 * process produces (Avro wire format, idempotent producer, acks=all) and consumes.
 * Wall clock: the producer stamps occurredAt = send time; the verdict carries requestedAt
 * (= the request's occurredAt); latency = receive time − requestedAt.
 *
 *   npm run bench:latency                       # 100, 1000, 2000 req/s; 3 runs of 10 s each
 *   npm run bench:latency -- --quick            # 100 req/s, 1 run of 3 s
 *   npm run bench:latency -- --rates 500,1000 --seconds 20 --runs 5
 *
 * Baseline on the same broker: a kafkajs "echo" in the same child-process position (consume
 * the input read_committed, produce each request unchanged to the output topic, idempotent,
 * no transaction): the latency of the Kafka round trip alone with these clients; and the same
 * echo on @platformatic/kafka (`echo-platformatic`), the baseline of the product on that
 * transport (`--alt-config kafkaClient=platformatic`: its p99 ÷ echo column uses this echo).
 * `echo-eos` is the kafkajs echo made exactly-once as the product's kafkajs transport is: one
 * transactional producer per input partition, one transaction per fetched batch with the
 * batch's offsets (sendOffsets), the coordinator cache on, the product's fetch and retry
 * settings: the floor of a read-process-write transaction on this client with no processing,
 * so that the product's p99 can be split into what exactly-once costs and what the processor
 * adds (its column: p99 ÷ echo-eos p99).
 * A third path, `product-uncached`, is the product with CG_COORDINATOR_CACHE=false (kafkajs'
 * FindCoordinator before 4 of each transaction's requests), so the cache's effect is measured
 * in the same run (`--skip product-uncached` leaves it out). `--alt-config k=v,...` adds a
 * `product-alt` path: the product with those settings on top of `--config`.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Consumer, ConsumerConfig, Kafka, Message, Producer } from 'kafkajs';
import type { Config } from '../src/config/config';
import type { ContextEvent } from '../src/engine/events';
import { RegistryCodec } from '../src/registry/codec';
import { verdictType } from '../src/schema/schemas';
import { TYPICAL_POLICY } from './typical';
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
  percentile,
  saveResult,
  sleep,
  spawnProcessor,
  stats,
  runMain,
  registerAll,
  rateRunOptions,
} from './kafka-common';

const {
  rates: RATES,
  seconds: SECONDS,
  warmupS: WARMUP_S,
  runs: RUNS,
} = rateRunOptions('100,1000,2000');
const TURNS_PER_REQUEST = 5;
const SESSIONS = 1000;
const PARTITIONS = 6;
const TICK_MS = 5;
const SKIP = new Set((option('skip') ?? '').split(',').filter(Boolean));
const CONFIG = configFromArgs(option('config'));

/** Sessions cycling through: SessionOpened, then (5 TurnAppended, 1 CompactionRequested)*. */
class Traffic {
  private readonly seq: number[] = new Array<number>(SESSIONS).fill(0);
  private readonly turn: number[] = new Array<number>(SESSIONS).fill(0);
  private next = 0;
  constructor(private readonly prefix: string) {}

  /** The next `n` events of one session-slot round robin; a request every 6th event of a session. */
  take(requests: number): ContextEvent[] {
    const out: ContextEvent[] = [];
    for (let r = 0; r < requests; r++) {
      const i = this.next++ % SESSIONS;
      const sessionId = `${this.prefix}-${i}`;
      const now = Date.now();
      const env = () => {
        const s = this.seq[i]!++;
        return { sessionId, seq: s, eventId: `${sessionId}-${s}`, occurredAt: now };
      };
      if (this.seq[i] === 0) out.push({ type: 'SessionOpened', ...env(), policy: TYPICAL_POLICY });
      for (let k = 0; k < TURNS_PER_REQUEST; k++) {
        const t = this.turn[i]!++;
        out.push({
          type: 'TurnAppended',
          ...env(),
          turn: t,
          tokens: { start: t * 100, end: t * 100 + 100 },
          messages: { start: t, end: t + 1 },
          role: t === 0 ? 'SYSTEM' : 'USER',
          pins: [],
        });
      }
      const t = this.turn[i]!;
      out.push({
        type: 'CompactionRequested',
        ...env(),
        requestId: `r-${t}`,
        unit: 'TURNS',
        summaryInput: { start: 0, end: Math.max(1, t - 2) },
        tailStart: Math.max(1, t - 2),
        occupancyTokens: 100_500,
      });
    }
    return out;
  }
}

const ALT_CONFIG = option('alt-config');
type PathName =
  'echo' | 'echo-eos' | 'echo-platformatic' | 'product-uncached' | 'product' | 'product-alt';
const PATHS: readonly PathName[] = [
  'echo',
  'echo-eos',
  'echo-platformatic',
  'product-uncached',
  'product',
  ...(ALT_CONFIG ? (['product-alt'] as const) : []),
];

interface RunResult {
  rate: number;
  path: PathName;
  sent: number;
  received: number;
  achievedRate: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

async function runOnce(env: Env, rate: number, pathName: PathName): Promise<RunResult> {
  const variant =
    pathName === 'product-uncached'
      ? { coordinatorCache: false }
      : pathName === 'product-alt'
        ? configFromArgs(ALT_CONFIG)
        : {};
  const c: Config = benchConfig(env, { partitions: PARTITIONS, ...CONFIG, ...variant });
  await createTopic(env.admin, c.inputTopic, PARTITIONS);
  let stopChild: () => Promise<void>;
  const echo = isEcho(pathName);
  if (!echo) {
    const child = await spawnProcessor(c);
    stopChild = child.stop;
  } else {
    await createTopic(env.admin, c.verdictTopic, PARTITIONS);
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'latency.ts'), `--${pathName}-child`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, CG_BENCH_CONFIG: JSON.stringify(c) },
      },
    );
    await new Promise<void>((res, rej) => {
      proc.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && res());
      proc.once('exit', (code) => rej(new Error(`echo child exited ${code}`)));
    });
    proc.removeAllListeners('exit');
    stopChild = () =>
      new Promise<void>((res) =>
        proc.exitCode !== null ? res() : (proc.once('exit', () => res()), proc.kill('SIGTERM')),
      );
  }
  const codec = RegistryCodec.fromConfig(c);
  await registerAll(codec);
  const latencies: number[] = [];
  let received = 0;
  let measureFrom = Infinity;
  const consumer = env.kafka.consumer({
    groupId: `${c.groupId}-reader`,
    readUncommitted: false,
    maxWaitTimeInMs: 100,
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
        if (echo && !m.headers?.at) continue;
        const requestedAt = !echo
          ? Number(
              (verdictType.fromBuffer(m.value!.subarray(5)) as { requestedAt: number }).requestedAt,
            )
          : Number(m.headers!.at!.toString());
        received++;
        if (requestedAt >= measureFrom) latencies.push(at - requestedAt);
      }
    },
  });
  await joinedP;
  const producer = env.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const traffic = new Traffic(`lat-${c.groupId}`);
  const started = Date.now();
  measureFrom = started + WARMUP_S * 1000;
  const endAt = measureFrom + SECONDS * 1000;
  let sent = 0;
  let sentMeasured = 0;
  // Open loop with catch-up: every tick, send what is due by now (a late tick sends more).
  while (Date.now() < endAt) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate) - sent;
    if (due > 0) {
      const events = traffic.take(due);
      const messages: Message[] = events.map((e) => ({
        key: e.sessionId,
        value: codec.encodeEvent(e),
        headers: e.type === 'CompactionRequested' ? { at: String(e.occurredAt) } : {},
      }));
      // A late tick on a loaded machine can owe many events: keep each request well below 1 MiB.
      for (let i = 0; i < messages.length; i += 2000)
        await producer.send({
          topic: c.inputTopic,
          acks: -1,
          messages: messages.slice(i, i + 2000),
        });
      sent += due;
      if (Date.now() >= measureFrom) sentMeasured += due;
    } else {
      await sleep(TICK_MS);
    }
  }
  const measuredS = (Date.now() - measureFrom) / 1000;
  // Let the tail arrive (up to 10 s).
  const waitUntil = Date.now() + 10_000;
  while (received < sent && Date.now() < waitUntil) await sleep(50);
  await producer.disconnect();
  await consumer.disconnect();
  await stopChild();
  codec.close();
  latencies.sort((a, b) => a - b);
  return {
    rate,
    path: pathName,
    sent,
    received,
    achievedRate: sentMeasured / measuredS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    p999: percentile(latencies, 99.9),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

function isEcho(p: PathName): boolean {
  return p === 'echo' || p === 'echo-eos' || p === 'echo-platformatic';
}

/** The echo on the Kafka client of product path `p` (product-alt: of its own settings). */
function echoOf(p: PathName): PathName {
  const settings = p === 'product-alt' ? { ...CONFIG, ...configFromArgs(ALT_CONFIG) } : CONFIG;
  return settings.kafkaClient === 'platformatic' ? 'echo-platformatic' : 'echo';
}

/**
 * An echo's kafkajs consumer of the input, read_committed and subscribed from the beginning;
 * READY on stdout at its first join, which the parent waits for.
 */
async function subscribedEchoConsumer(
  kafka: Kafka,
  c: Config,
  fetch: Pick<ConsumerConfig, 'maxBytesPerPartition' | 'maxBytes' | 'maxWaitTimeInMs'>,
): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId: c.groupId, readUncommitted: false, ...fetch });
  let ready = false;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    if (!ready) process.stdout.write('READY\n');
    ready = true;
  });
  await consumer.connect();
  await consumer.subscribe({ topic: c.inputTopic, fromBeginning: true });
  return consumer;
}

/** Baseline child: consume the input read_committed, produce each request as is (no engine, no transaction). */
async function echoChild(): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const c = JSON.parse(process.env.CG_BENCH_CONFIG!) as Config;
  const kafka = new Kafka({
    clientId: 'cg-bench-echo',
    brokers: c.brokers,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const consumer = await subscribedEchoConsumer(kafka, c, {});
  await consumer.run({
    partitionsConsumedConcurrently: 3,
    eachBatch: async ({ batch }) => {
      const messages = batch.messages.map((m) => ({
        key: m.key,
        value: m.value,
        headers: m.headers,
      }));
      for (let i = 0; i < messages.length; i += 2000)
        await producer.send({
          topic: c.verdictTopic,
          acks: -1,
          messages: messages.slice(i, i + 2000),
        });
    },
  });
  process.once(
    'SIGTERM',
    () =>
      void Promise.all([consumer.disconnect(), producer.disconnect()]).finally(() =>
        process.exit(0),
      ),
  );
}

/**
 * The kafkajs echo, exactly once as the product's kafkajs transport: a transactional producer
 * per input partition (transactionalId per partition), each fetched batch forwarded in one
 * transaction with its offsets, the transaction coordinators cached as the product does.
 */
async function echoEosChild(): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const { cacheTransactionCoordinators } = await import('../src/kafka/kafkajs/coordinatorCache');
  const c = JSON.parse(process.env.CG_BENCH_CONFIG!) as Config;
  const kafka = new Kafka({
    clientId: 'cg-bench-echo-eos',
    brokers: c.brokers,
    logLevel: logLevel.NOTHING,
  });
  cacheTransactionCoordinators(kafka);
  const producers = new Map<number, Promise<Producer>>();
  const producerOf = (partition: number): Promise<Producer> => {
    let p = producers.get(partition);
    if (p === undefined) {
      const producer = kafka.producer({
        transactionalId: `${c.groupId}-echo-eos-${partition}`,
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // As the product's producers: a transaction begun before the last one's markers are
        // written is refused (CONCURRENT_TRANSACTIONS) and retried after this, not kafkajs' 300 ms.
        retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: c.transactionRetryMs },
      });
      p = producer.connect().then(() => producer);
      producers.set(partition, p);
    }
    return p;
  };
  // Fetching as the product's consumer does (src/kafka/kafkajs/groupConsumer.ts).
  const consumer = await subscribedEchoConsumer(kafka, c, {
    maxBytesPerPartition: c.maxBytesPerPartition,
    maxBytes: c.fetchMaxBytes,
    maxWaitTimeInMs: c.fetchMaxWaitMs,
  });
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: c.partitionsConsumedConcurrently,
    eachBatch: async ({ batch }) => {
      if (batch.messages.length === 0) return;
      const messages = batch.messages.map((m) => ({
        key: m.key,
        value: m.value,
        headers: m.headers,
      }));
      const txn = await (await producerOf(batch.partition)).transaction();
      try {
        for (let i = 0; i < messages.length; i += 2000)
          await txn.send({
            topic: c.verdictTopic,
            acks: -1,
            messages: messages.slice(i, i + 2000),
          });
        await txn.sendOffsets({
          consumerGroupId: c.groupId,
          topics: [
            {
              topic: c.inputTopic,
              partitions: [
                {
                  partition: batch.partition,
                  offset: (BigInt(batch.lastOffset()) + 1n).toString(),
                },
              ],
            },
          ],
        });
        await txn.commit();
      } catch (e) {
        await txn.abort().catch(() => undefined);
        throw e;
      }
    },
  });
  process.once('SIGTERM', () => {
    const all = [...producers.values()].map((p) => p.then((x) => x.disconnect()));
    void Promise.allSettled([consumer.disconnect(), ...all]).finally(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  const env = await openEnv();
  try {
    const m0 = machine();
    const runs: RunResult[] = [];
    for (const rate of RATES) {
      for (let r = 1; r <= RUNS; r++) {
        for (const p of PATHS) {
          if (SKIP.has(p)) continue;
          const res = await runOnce(env, rate, p);
          runs.push(res);
          console.error(
            `rate ${rate}/s run ${r}/${RUNS} ${p}: achieved ${fmt(res.achievedRate)} req/s, sent ${res.sent}, received ${res.received}; p50 ${res.p50} ms, p99 ${res.p99} ms, p99.9 ${res.p999} ms, max ${res.max} ms`,
          );
        }
      }
    }
    const m1 = machine();
    console.log(
      `\n## verdict latency: ${RUNS} runs × ${SECONDS} s (after ${WARMUP_S} s warm-up) per rate; ${TURNS_PER_REQUEST} TurnAppended per request; ${SESSIONS} sessions; ${PARTITIONS} partitions`,
    );
    console.log(
      `machine: ${describeMachine(m0)} (before); load avg after ${(m1.loadavg as number[]).join(' ')}\n`,
    );
    console.log(
      '| req/s (target) | path | achieved req/s | p50 ms | p99 ms | p99.9 ms | max ms | p99 ÷ echo p99 | p99 ÷ echo-eos p99 |',
    );
    console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|');
    const summary: Record<string, unknown>[] = [];
    for (const rate of RATES) {
      const p99Of = (path: PathName) =>
        stats(runs.filter((x) => x.rate === rate && x.path === path).map((x) => x.p99)).median;
      // echo-eos is the kafkajs echo with transactions: compared with the plain echo, and the
      // kafkajs product paths with it too (what the processor adds to exactly-once).
      const plainEcho = (p: PathName): PathName => (p === 'echo-eos' ? 'echo' : echoOf(p));
      const eosRatio = (p: PathName, p99: number) =>
        isEcho(p) || echoOf(p) !== 'echo' ? '–' : fmt(p99 / p99Of('echo-eos'), 1);
      for (const p of PATHS) {
        const rs = runs.filter((x) => x.rate === rate && x.path === p);
        if (rs.length === 0) continue;
        const med = (k: keyof RunResult) => stats(rs.map((x) => x[k] as number)).median;
        const row = {
          rate,
          path: p,
          achieved: med('achievedRate'),
          p50: med('p50'),
          p99: med('p99'),
          p999: med('p999'),
          max: med('max'),
        };
        summary.push(row);
        console.log(
          `| ${rate} | ${p} | ${fmt(row.achieved)} | ${fmt(row.p50)} | ${fmt(row.p99)} | ${fmt(row.p999)} | ${fmt(row.max)} | ${p === 'echo' || p === 'echo-platformatic' ? '1' : fmt(row.p99 / p99Of(plainEcho(p)), 1)} | ${eosRatio(p, row.p99)} |`,
        );
      }
    }
    const file = saveResult('latency', { machine: { before: m0, after: m1 }, runs, summary });
    console.error(`\nresult: ${file}`);
  } finally {
    await env.stop();
  }
}

/**
 * The same echo on @platformatic/kafka: its stream consumer (read_committed, the group's
 * committed offsets else the earliest) and an idempotent producer; what arrived while a send
 * was in flight goes in the next one (the stream delivers records one by one, not in batches).
 */
async function echoPlatformaticChild(): Promise<void> {
  const { Consumer, Producer, MessagesStreamModes } = await import('@platformatic/kafka');
  const c = JSON.parse(process.env.CG_BENCH_CONFIG!) as Config;
  const base = { clientId: 'cg-bench-echo-platformatic', bootstrapBrokers: c.brokers };
  const producer = new Producer({ ...base, idempotent: true, autocreateTopics: false });
  const consumer = new Consumer({ ...base, groupId: c.groupId, autocommit: false });
  consumer.on('consumer:group:join', () => process.stdout.write('READY\n'));
  const stream = await consumer.consume({
    topics: [c.inputTopic],
    mode: MessagesStreamModes.COMMITTED,
    fallbackMode: 'earliest',
    maxWaitTime: 100,
  });
  type Out = { key: Buffer; value: Buffer; headers: Map<Buffer, Buffer>; partition: number };
  let pending: Out[] = [];
  let sending: Promise<void> | null = null;
  const flush = (): void => {
    if (sending !== null || pending.length === 0) return;
    const messages = pending.splice(0, 2000).map((m) => ({ ...m, topic: c.verdictTopic }));
    sending = producer
      .send({ messages })
      .then(() => undefined)
      .finally(() => {
        sending = null;
        flush();
      });
  };
  stream.on('data', (m) => {
    pending.push({ key: m.key, value: m.value, headers: m.headers, partition: m.partition });
    setImmediate(flush);
  });
  process.once('SIGTERM', () => {
    pending = [];
    void Promise.allSettled([stream.close(), consumer.close(true), producer.close()]).finally(() =>
      process.exit(0),
    );
  });
}

const child = flag('echo-child')
  ? echoChild
  : flag('echo-eos-child')
    ? echoEosChild
    : flag('echo-platformatic-child')
      ? echoPlatformaticChild
      : null;
if (child !== null) {
  child().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
} else {
  runMain(main);
}
