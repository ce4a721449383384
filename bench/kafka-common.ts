/**
 * Shared pieces of the Kafka benchmarks (bench/e2e.ts, latency.ts, restore.ts, scaleout.ts):
 * the broker + registry (provideServices: KAFKA_BROKERS/SCHEMA_REGISTRY_URL if set, else a local
 * Kafka KRaft broker + Apicurio started from the Maven cache), unique configs, pre-loading an
 * input topic, waiting for a group to commit to the end, the machine description and statistics,
 * and checking that the product published what the offline engine does for the same events.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners, type Admin, type Message, type Producer } from 'kafkajs';
import { DEFAULTS, type Config } from '../src/config/config';
import type { ContextEvent } from '../src/engine/events';
import { SessionsInPlace } from '../src/audit/replay';
import { outputRequests } from '../src/kafka/outputChunks';
import type { RegistryCodec } from '../src/registry/codec';
import { registerSchemas } from '../src/registry/register';
import { partitionCount } from '../src/kafka/topics';
import { kafkajsAdmin } from '../src/kafka/kafkajs';
import { provideServices, type Services } from '../src/services';
import { DEFAULT_KAFKA_VERSION } from '../src/services/maven';
import { killIfWeDie } from '../src/services/reaper';

import { sleep } from '../src/time';

export { sleep };

/** Runs a benchmark's main: exit 0 when it resolves; print the error and exit 1 when it fails. */
export function runMain(main: () => Promise<unknown>): void {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}

export function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

export function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The options of the fixed-rate benchmarks (latency, client): rates, seconds, warm-up, runs. */
export function rateRunOptions(defaultRates: string): {
  quick: boolean;
  rates: number[];
  seconds: number;
  warmupS: number;
  runs: number;
} {
  const quick = flag('quick');
  return {
    quick,
    rates: (option('rates') ?? (quick ? '100' : defaultRates)).split(',').map(Number),
    seconds: Number(option('seconds') ?? (quick ? 3 : 10)),
    warmupS: Number(option('warmup') ?? (quick ? 1 : 2)),
    runs: Number(option('runs') ?? (quick ? 1 : 3)),
  };
}

export interface Env {
  services: Services;
  kafka: Kafka;
  admin: Admin;
  stop(): Promise<void>;
}

export async function openEnv(): Promise<Env> {
  const started = Date.now();
  const services = await provideServices({ docker: false });
  console.error(
    `services (${services.mode}) ready in ${Date.now() - started} ms: ${services.brokers.join(',')}`,
  );
  const kafka = new Kafka({
    clientId: 'cg-bench',
    brokers: services.brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  return {
    services,
    kafka,
    admin,
    async stop() {
      await admin.disconnect().catch(() => undefined);
      await services.stop();
    },
  };
}

/** A config with topic and group names unique to one run. */
/**
 * `--config key=value,key=value`: processor settings (Config field names, numbers or strings)
 * for tuning studies, e.g. `--config partitionsConsumedConcurrently=3,fetchMaxWaitMs=500`.
 */
export function configFromArgs(spec: string | undefined): Partial<Config> {
  const out: Record<string, string | number | boolean> = {};
  for (const pair of (spec ?? '').split(',').filter(Boolean)) {
    const [key, value] = pair.split('=');
    if (!key || value === undefined || !(key in DEFAULTS)) {
      throw new Error(`--config: expected key=value with a Config field name, got "${pair}"`);
    }
    out[key] = /^-?\d+(\.\d+)?$/.test(value)
      ? Number(value)
      : value === 'true' || value === 'false'
        ? value === 'true'
        : value;
  }
  return out as Partial<Config>;
}

export function benchConfig(env: Env, overrides: Partial<Config> = {}): Config {
  const id = randomUUID().slice(0, 8);
  return {
    ...DEFAULTS,
    brokers: env.services.brokers,
    registryUrl: env.services.registryUrl,
    groupId: `bench-${id}`,
    inputTopic: `bench-in-${id}`,
    verdictTopic: `bench-verdicts-${id}`,
    spillTopic: `bench-spills-${id}`,
    auditTopic: `bench-audit-${id}`,
    dlqTopic: `bench-in-${id}.dlq`,
    changelogTopic: `bench-state-${id}`,
    logLevel: 'silent',
    httpHost: '127.0.0.1',
    httpPort: 0,
    sessionTimeoutMs: 10_000,
    // The simulated fleet signs nothing (contract §4b): explicit, as `run` requires.
    allowUnsigned: true,
    ...overrides,
  };
}

export async function createTopic(
  admin: Admin,
  topic: string,
  partitions: number,
  compact = false,
): Promise<void> {
  await admin.createTopics({
    waitForLeaders: false,
    topics: [
      {
        topic,
        numPartitions: partitions,
        replicationFactor: 1,
        configEntries: compact
          ? [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'min.compaction.lag.ms', value: '0' },
            ]
          : [],
      },
    ],
  });
  const found = await partitionCount(kafkajsAdmin(admin), topic, 30_000);
  if (found !== partitions)
    throw new Error(`topic ${topic} has ${found} partitions, not ${partitions}`);
}

/**
 * Produces messages (idempotent, acks=all) so that every key's messages land in the order
 * given: each partition's messages go out in chunks one send at a time, the partitions side by
 * side. Why not several sends in flight for the same partitions: concurrent `send` calls of one
 * kafkajs producer do not keep their order per partition: four in flight leave 27 % of a
 * 200k-event fleet out of its session's order (53,655 seq jumps, 18,419 backwards), and the
 * processor then decides SEQ_CONFLICT and EVENT_GAP on input that the simulator produced in
 * order. Keyed messages get the
 * partition kafkajs' default partitioner would give them.
 */
export async function preload(
  kafka: Kafka,
  topic: string,
  messages: readonly Message[],
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const partitionMetadata = await admin
    .fetchTopicMetadata({ topics: [topic] })
    .then((m) => m.topics[0]!.partitions)
    .finally(() => admin.disconnect());
  const partitionOf = Partitioners.DefaultPartitioner();
  const byPartition = new Map<number, Message[]>();
  for (const message of messages) {
    const partition = partitionOf({ topic, partitionMetadata, message });
    const list = byPartition.get(partition) ?? [];
    if (list.length === 0) byPartition.set(partition, list);
    list.push({ ...message, partition });
  }
  const producer: Producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
  await producer.connect();
  const started = Date.now();
  try {
    await Promise.all(
      [...byPartition.values()].map(async (list) => {
        // One partition's messages in a request form one record batch: keep each under the
        // broker's message.max.bytes, as the processor does (src/kafka/outputChunks.ts).
        for (const topicMessages of outputRequests([[topic, list]])) {
          await producer.sendBatch({ acks: -1, topicMessages });
        }
      }),
    );
  } finally {
    await producer.disconnect();
  }
  return Date.now() - started;
}

/** Sum of the high watermarks of a topic's partitions. */
export async function topicEnd(admin: Admin, topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((n, p) => n + Number(p.high), 0);
}

/** Waits until the group's committed offsets reach the input topic's end on every partition. */
export async function waitCommitted(
  admin: Admin,
  groupId: string,
  topic: string,
  timeoutMs: number,
  pollMs = 100,
): Promise<number> {
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const parts = t?.partitions ?? [];
    if (parts.length === ends.size && parts.every((p) => p.offset === ends.get(p.partition)))
      return Date.now();
    if (Date.now() > deadline) {
      const done = parts.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
      throw new Error(
        `group ${groupId} did not commit to the end of ${topic} within ${timeoutMs} ms (${done} committed)`,
      );
    }
    await sleep(pollMs);
  }
}

export interface Stats {
  median: number;
  min: number;
  max: number;
}

export function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
  return { median, min: s[0] ?? NaN, max: s[n - 1] ?? NaN };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export const fmt = (x: number, digits = 0) =>
  Number.isFinite(x)
    ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : String(x);

/** `kafka`: what the run used, when the bench knows better than the environment (the soak). */
export function machine(kafka?: string): Record<string, unknown> {
  let cpusAllowed: string | null = null;
  try {
    cpusAllowed =
      /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? null;
  } catch {
    /* not Linux */
  }
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    nproc: os.cpus().length,
    cpusAllowed,
    node: process.version,
    kafka:
      kafka ??
      (process.env.KAFKA_BROKERS
        ? 'external (KAFKA_BROKERS)'
        : `${DEFAULT_KAFKA_VERSION} (local KRaft, 1 broker)`),
    totalMemGiB: Math.round(os.totalmem() / 2 ** 30),
    loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

export function describeMachine(m: Record<string, unknown>): string {
  return `${m.cpuModel}, nproc ${m.nproc}, Node ${m.node}, Kafka ${m.kafka}, ${m.totalMemGiB} GiB; load avg ${(m.loadavg as number[]).join(' ')}`;
}

/** Writes the JSON result next to the benchmarks (bench/results/<name>-<date>.json). */
export function saveResult(name: string, result: unknown): string {
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(result, null, 2));
  return file;
}

/**
 * A processor instance in a child process of its own (bench/processor-child.ts), as deployed:
 * its own event loop and core. Resolves once it is ready (group joined, state restored).
 */
export interface Child {
  proc: ChildProcess;
  /** When the processor became ready (epoch ms): joined, every assigned partition restored. */
  readyAt: number;
  /** The processor's HTTP port (/metrics, /readyz). */
  httpPort: number;
  stop(): Promise<void>;
}

/**
 * The Node options the processor is deployed with (package.json `start`, Dockerfile
 * NODE_OPTIONS; test/unit/node-options.test.ts keeps the three equal), so the benchmarks
 * measure the product as it runs.
 */
export const PRODUCT_NODE_ARGS: readonly string[] = ['--max-semi-space-size=32'];

/**
 * The environment the processor is deployed with (package.json `start`, Dockerfile `ENV`; the
 * same test keeps them equal): glibc's malloc asks for transparent huge pages, because first
 * touching fresh memory is what makes kafkajs' copy of every fetch response slow (1.20× end to
 * end at 1M events, bench/README.md "End to end"; docs/decisions.md 29).
 */
export const PRODUCT_ENV: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
};

export function spawnProcessor(
  config: Config,
  extraNodeArgs: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Child> {
  const proc = spawn(
    process.execPath,
    [
      ...PRODUCT_NODE_ARGS,
      ...extraNodeArgs,
      '--import',
      'tsx',
      path.join(__dirname, 'processor-child.ts'),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: {
        ...process.env,
        ...PRODUCT_ENV,
        ...extraEnv,
        CG_BENCH_CONFIG: JSON.stringify(config),
      },
    },
  );
  // A bench killed hard must not leave its processor running.
  killIfWeDie(proc);
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.once('exit', (code) =>
      reject(new Error(`processor child exited with ${code} before ready`)),
    );
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const ready = /READY (\d+) (\d+)\n/.exec(buf);
      if (ready) {
        proc.removeAllListeners('exit');
        resolve({
          proc,
          // The child's own clock (the same machine's): it may notice late that it is ready.
          readyAt: Number(ready[2]),
          httpPort: Number(ready[1]),
          stop: () =>
            new Promise<void>((res) => {
              if (proc.exitCode !== null) return res();
              proc.once('exit', () => res());
              proc.kill('SIGTERM');
              setTimeout(() => proc.kill('SIGKILL'), 15_000).unref();
            }),
        });
      }
    });
  });
}

/** What a processor published, by its own metrics: verdicts, spill requests, audits by code. */
export interface Published {
  verdicts: number;
  spillRequests: number;
  audits: Record<string, number>;
}

/** Reads `Published` from a running processor's /metrics (src/metrics/metrics.ts). */
export async function publishedByMetrics(httpPort: number): Promise<Published> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  const out: Published = { verdicts: 0, spillRequests: 0, audits: {} };
  for (const line of (await res.text()).split('\n')) {
    const m =
      /^compaction_guard_(verdicts|spill_requests|audit_records)_total(\{[^}]*\})? (\S+)$/.exec(
        line,
      );
    if (!m) continue;
    const n = Number(m[3]);
    if (m[1] === 'verdicts') out.verdicts += n;
    else if (m[1] === 'spill_requests') out.spillRequests += n;
    else {
      const code = /code="([^"]+)"/.exec(m[2] ?? '')?.[1] ?? '?';
      out.audits[code] = (out.audits[code] ?? 0) + n;
    }
  }
  return out;
}

/**
 * A counter of the processor child's /metrics, summed over its series with `labels` (e.g.
 * `outcome="committed"`): `compaction_guard_<name>`.
 */
export async function counterOf(httpPort: number, name: string, labels = ''): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  let n = 0;
  for (const line of (await res.text()).split('\n')) {
    const m = /^compaction_guard_(\w+?)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m?.[1] === name && (m[2] ?? '').includes(labels)) n += Number(m[3]);
  }
  return n;
}

/** `Published` of the offline engine over the same events (what the product must match). */
export function publishedOffline(events: readonly ContextEvent[]): Published {
  const fleet = new SessionsInPlace();
  const out: Published = { verdicts: 0, spillRequests: 0, audits: {} };
  for (const e of events) {
    for (const o of fleet.process(e, e.occurredAt).outputs) {
      if (o.record === 'verdict') out.verdicts++;
      else if (o.record === 'spill-request') out.spillRequests++;
      else out.audits[o.value.code] = (out.audits[o.value.code] ?? 0) + 1;
    }
  }
  return out;
}

/** The differences between two `Published`, as readable lines (none: they agree). */
export function publishedDifferences(got: Published, want: Published): string[] {
  const diffs: string[] = [];
  if (got.verdicts !== want.verdicts) diffs.push(`verdicts ${got.verdicts} ≠ ${want.verdicts}`);
  if (got.spillRequests !== want.spillRequests)
    diffs.push(`spill requests ${got.spillRequests} ≠ ${want.spillRequests}`);
  for (const code of new Set([...Object.keys(got.audits), ...Object.keys(want.audits)])) {
    const g = got.audits[code] ?? 0;
    const w = want.audits[code] ?? 0;
    if (g !== w) diffs.push(`audit ${code} ${g} ≠ ${w}`);
  }
  return diffs;
}

/**
 * The differences left once `read` agrees with `expected` or `timeoutMs` passed. Why wait: the
 * group's offsets are visible once the transaction commits, a moment before the processor has
 * its commit answer and counts that batch's outputs in its metrics.
 */
export async function publishedMismatch(
  read: () => Promise<Published>,
  expected: Published,
  timeoutMs = 3_000,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const diffs = publishedDifferences(await read(), expected);
    if (diffs.length === 0 || Date.now() > deadline) return diffs;
    await sleep(200);
  }
}

/** A process's peak resident set (VmHWM) in MB, from /proc (Linux); NaN elsewhere. */
export function peakRssMb(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * `codec.registerAll()` with the processor's patience (src/registry/register.ts): the shared
 * registry can stall for a call's 15 s timeout now and then, and that should not end a
 * benchmark of many minutes.
 */
export async function registerAll(codec: RegistryCodec): Promise<void> {
  await registerSchemas(codec, null, (e, attempt) =>
    console.error(
      `schema registration failed (attempt ${attempt}): ${(e as Error).message}; retrying`,
    ),
  );
}
