/**
 * Memory under a flood of new session ids: the session cap (CG_MAX_SESSIONS, contract §8
 * "Capacity", docs/decisions.md 121) bounds what one instance holds.
 *
 * The input: one good session opened first (SessionOpened and a few turns, committed by a first
 * processor that then stops), then N tiny events (an out-of-band SpillFailed each, ~150 bytes
 * of JSON), each of a distinct session id: the cheapest way to create session state. A second
 * processor (restoring the good session) drains them in a child process (the product's Node
 * options), with the cap under test, and then gets two requests: the good
 * session's (held before the flood: approved) and a new session's (refused at the cap:
 * UNKNOWN_SESSION, HALT, naming the cap). Measured: the child's RSS every second (peak and at
 * the end), sessions_tracked, the capacity counters, events/s from ready to the last input offset
 * committed. Baseline in the same run: the same input with a cap above N (every session held).
 *
 *   npm run bench:memory                          # 1M ids; capped (default cap) and uncapped
 *   npm run bench:memory -- --double              # also the capped round with 2M ids
 *   npm run bench:memory -- --events 200000 --cap 50000 --no-baseline
 */
import { readFileSync } from 'node:fs';
import type { Message } from 'kafkajs';
import { DEFAULTS, type Config } from '../src/config/config';
import type { ContextEvent } from '../src/engine/events';
import { verdictType } from '../src/schema/schemas';
import { SessionBuilder } from '../test/support/sessionBuilder';
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
  spawnProcessor,
  waitCommitted,
  runMain,
} from './kafka-common';

const EVENTS = Number(option('events') ?? 1_000_000);
const CAP = Number(option('cap') ?? DEFAULTS.maxSessions);
const BASELINE = !flag('no-baseline');
/** Also the capped round with twice the ids: what the cap holds should not grow with them. */
const DOUBLE = flag('double');
const PARTITIONS = 6;
const TIMEOUT_MS = 60 * 60_000;

/** A process's resident set now (VmRSS) in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function metrics(port: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^((?:compaction_guard|nodejs|process)_[a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const json = (e: ContextEvent | object): Message => ({
  key: (e as { sessionId: string }).sessionId,
  value: JSON.stringify(e),
});

function flood(n: number, t0: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      json({
        type: 'SpillFailed',
        sessionId: `junk-${i}`,
        seq: null,
        eventId: `e-${i}`,
        occurredAt: t0,
        spillRequestId: 'none',
        error: 'x',
      }),
    );
  return out;
}

interface Round {
  cap: number;
  events: number;
  /** V8's heap in use at the end (nodejs_heap_size_used_bytes, after the drain and a pause). */
  heapUsedMb: number;
  eventsPerS: number;
  peakRssMb: number;
  endRssMb: number;
  sessionsTracked: number;
  sessionsRefused: number;
  eventsRefused: number;
  filterFill: number;
  goodDecision: string;
  newcomerDecision: string;
}

async function verdictOf(
  env: Env,
  c: Config,
  sessionId: string,
): Promise<{ decision: string; action: string; diagnostic: string | null }> {
  const consumer = env.kafka.consumer({ groupId: `bench-read-${sessionId}-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic: c.verdictTopic, fromBeginning: true });
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no verdict for ${sessionId}`)), 120_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() !== sessionId) return;
          clearTimeout(timer);
          resolve(verdictType.fromBuffer(message.value!.subarray(5)) as never);
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
}

async function round(env: Env, cap: number, events: number): Promise<Round> {
  const c = benchConfig(env, { maxSessions: cap, partitions: PARTITIONS });
  await createTopic(env.admin, c.inputTopic, PARTITIONS);
  const t0 = Date.now();
  // The good session is held before the flood: a first processor commits it and stops.
  const good = new SessionBuilder('good-session', t0).open().turns(5);
  await preload(env.kafka, c.inputTopic, good.events.map(json));
  const first = await spawnProcessor(c);
  const held = async () =>
    (await fetch(`http://127.0.0.1:${first.httpPort}/sessions/good-session`)).status === 200;
  while (!(await held())) await sleep(200);
  await first.stop();
  console.error(`cap ${cap}: producing ${events} events of distinct sessions…`);
  await preload(env.kafka, c.inputTopic, flood(events, t0));
  const child = await spawnProcessor(c);
  const pid = child.proc.pid!;
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 1_000);
  try {
    const done = await waitCommitted(env.admin, c.groupId, c.inputTopic, TIMEOUT_MS, 200);
    const seconds = (done - child.readyAt) / 1000;
    good.request('good-1', 'TURNS', 0, 0, 0);
    const newcomer = new SessionBuilder('newcomer', Date.now()).open().turns(2);
    newcomer.request('n-1', 'TURNS', 0, 0, 0);
    await preload(env.kafka, c.inputTopic, [good.last, ...newcomer.events].map(json));
    const goodVerdict = await verdictOf(env, c, 'good-session');
    const newVerdict = await verdictOf(env, c, 'newcomer');
    await sleep(10_000);
    const m = await metrics(child.httpPort);
    peak = Math.max(peak, rssMb(pid));
    return {
      cap,
      events,
      heapUsedMb: (await metrics(child.httpPort)).get('nodejs_heap_size_used_bytes')! / 2 ** 20,
      eventsPerS: events / seconds,
      peakRssMb: peak,
      endRssMb: rssMb(pid),
      sessionsTracked: m.get('compaction_guard_sessions_tracked') ?? NaN,
      sessionsRefused: m.get('compaction_guard_sessions_refused_at_capacity_total') ?? NaN,
      eventsRefused: m.get('compaction_guard_events_refused_at_capacity_total') ?? NaN,
      filterFill: m.get('compaction_guard_refused_filter_fill_ratio') ?? NaN,
      goodDecision: `${goodVerdict.decision}/${goodVerdict.action}`,
      newcomerDecision: `${newVerdict.decision}/${newVerdict.action}${newVerdict.diagnostic?.includes('CG_MAX_SESSIONS') ? ' (names the cap)' : ''}`,
    };
  } finally {
    clearInterval(sampler);
    await child.stop();
  }
}

async function main(): Promise<void> {
  const env = await openEnv();
  try {
    const rounds: Round[] = [await round(env, CAP, EVENTS)];
    if (DOUBLE) rounds.push(await round(env, CAP, 2 * EVENTS));
    if (BASELINE) rounds.push(await round(env, EVENTS + 10, EVENTS));
    console.log(`\nmemory under a flood of new session ids (${describeMachine(machine())})`);
    console.log(
      'ids        | cap        | events/s | peak RSS MB | end RSS MB | heap used MB | sessions_tracked | refused sessions | refused events | filter fill | held session | new session',
    );
    for (const r of rounds)
      console.log(
        [
          fmt(r.events).padEnd(10),
          fmt(r.cap).padEnd(10),
          fmt(r.eventsPerS).padStart(8),
          fmt(r.peakRssMb).padStart(11),
          fmt(r.endRssMb).padStart(10),
          fmt(r.heapUsedMb).padStart(12),
          fmt(r.sessionsTracked).padStart(16),
          fmt(r.sessionsRefused).padStart(16),
          fmt(r.eventsRefused).padStart(14),
          r.filterFill.toFixed(3).padStart(11),
          r.goodDecision.padStart(12),
          r.newcomerDecision,
        ].join(' | '),
      );
    const uncapped = BASELINE ? rounds[rounds.length - 1]! : null;
    if (uncapped !== null)
      console.log(
        `capped ÷ uncapped at ${fmt(EVENTS)} ids: peak RSS ${(rounds[0]!.peakRssMb / uncapped.peakRssMb).toFixed(2)}, heap used ${(rounds[0]!.heapUsedMb / uncapped.heapUsedMb).toFixed(2)}, events/s ${(rounds[0]!.eventsPerS / uncapped.eventsPerS).toFixed(2)}`,
      );
    const bad = rounds.filter((r) => r.sessionsTracked > r.cap);
    if (bad.length > 0) throw new Error(`sessions_tracked above the cap: ${JSON.stringify(bad)}`);
    console.log(`saved ${saveResult('memory', { machine: machine(), rounds })}`);
  } finally {
    await env.stop();
  }
}

runMain(main);
