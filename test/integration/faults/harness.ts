/**
 * Fault-injection helpers (contract §8): the processor as a killable child process, waiting for
 * the group to have committed every input offset, draining the output topics read_committed,
 * the exactly-once check against the offline audit, and an HTTP proxy in front of the schema
 * registry that can be switched off.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { killIfWeDie } from '../../../src/services/reaper';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Config } from '../../../src/config/config';
import { ENV_NAMES, configEnv } from '../../../src/config/config';
import type { ContextEvent } from '../../../src/engine/events';
import type { AuditLineRecord } from '../../../src/audit/replay';
import { deserializeState, serializeState } from '../../../src/engine/serialize';
import type { SessionState } from '../../../src/engine/state';
import { sessionOfKey } from '../../../src/kafka/changelogKeys';
import { Replay, SessionsInPlace } from '../../../src/audit/replay';
import { consumed, decodeOutput, kafka, offline, verdictMap, type Consumed } from '../pipeline';

export const REPO_ROOT = resolve(__dirname, '../../..');
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The test run's environment as a fresh terminal has it: no CG_*, Kafka or registry setting. */
export function terminalEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('CG_') && k !== 'KAFKA_BROKERS' && k !== 'SCHEMA_REGISTRY_URL',
    ),
  ) as Record<string, string>;
}

/** Whether nothing listens on `port` of the loopback (it can be bound). */
export async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A free TCP port on the loopback (closed again before it is returned). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Polls `check` until it holds; throws after `timeoutMs` naming `what`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export async function httpStatus(port: number, path: string, host = '127.0.0.1'): Promise<number> {
  const res = await fetch(`http://${host}:${port}${path}`, {
    signal: AbortSignal.timeout(3_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** `node bin/compaction-guard.js run` with the config as env vars, output to a log file. */
export interface Child {
  proc: ChildProcess;
  httpPort: number;
  /** Where its HTTP server answers (127.0.0.1 unless it runs in a network namespace). */
  httpHost: string;
  exited: Promise<number | null>;
}

/** Where a processor runs: a command prefix (e.g. `ip netns exec <ns>`) and its address there. */
export interface SpawnPlace {
  prefix: string[];
  /** The namespace's address: its HTTP server binds there, the test reaches it there. */
  address: string;
}

/** The group and topic names of `c` as the env vars of `run`. */
export function topicEnv(c: Config): Record<string, string> {
  return {
    [ENV_NAMES.groupId]: c.groupId,
    [ENV_NAMES.inputTopic]: c.inputTopic,
    [ENV_NAMES.verdictTopic]: c.verdictTopic,
    [ENV_NAMES.spillTopic]: c.spillTopic,
    [ENV_NAMES.auditTopic]: c.auditTopic,
    [ENV_NAMES.dlqTopic]: c.dlqTopic,
    [ENV_NAMES.changelogTopic]: c.changelogTopic,
  };
}

export async function spawnProcessor(
  c: Config,
  logFile: string,
  extraEnv: Record<string, string> = {},
  place?: SpawnPlace,
): Promise<Child> {
  const httpPort = await freePort();
  const httpHost = place?.address ?? '127.0.0.1';
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    [ENV_NAMES.brokers]: c.brokers.join(','),
    [ENV_NAMES.registryUrl]: c.registryUrl ?? '',
    ...topicEnv(c),
    [ENV_NAMES.partitions]: String(c.partitions),
    [ENV_NAMES.sessionTimeoutMs]: String(c.sessionTimeoutMs),
    [ENV_NAMES.transactionTimeoutMs]: String(c.transactionTimeoutMs),
    [ENV_NAMES.httpHost]: httpHost,
    [ENV_NAMES.httpPort]: String(httpPort),
    // A node's own address is not a loopback one: /sessions (unused here) would need a token.
    ...(place ? { [ENV_NAMES.httpSessions]: 'false' } : {}),
    [ENV_NAMES.logLevel]: 'warn',
    ...configEnv(c, ['allowUnsigned', 'trustedKeysFile']),
    ...extraEnv,
  };
  const fd = openSync(logFile, 'a');
  const command = [process.execPath, join(REPO_ROOT, 'bin/compaction-guard.js'), 'run'];
  const [program, ...args] = [...(place?.prefix ?? []), ...command] as [string, ...string[]];
  const proc = spawn(program, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  // A jest worker killed mid-scenario must not leave its processors running.
  killIfWeDie(proc);
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, httpPort, httpHost, exited };
}

/** SIGKILL: no shutdown hook runs, the open transaction (if any) is left to the broker. */
export async function killHard(child: Child): Promise<void> {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  await Promise.race([child.exited, sleep(10_000)]);
}

export function faultLogFile(name: string): string {
  return join(tmpdir(), `cg-faults-${name}-${randomUUID().slice(0, 8)}.log`);
}

/** Until the group's committed offset of every input partition is the partition's end. */
export async function waitAllCommitted(c: Config, timeoutMs: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await waitFor(
      `group ${c.groupId} to commit the end of ${c.inputTopic}`,
      async () => {
        const ends = await admin.fetchTopicOffsets(c.inputTopic);
        const [committed] = await admin.fetchOffsets({
          groupId: c.groupId,
          topics: [c.inputTopic],
        });
        return ends.every(
          (e) => committed?.partitions.find((p) => p.partition === e.partition)?.offset === e.high,
        );
      },
      timeoutMs,
      500,
    );
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads `topics` read_committed from the beginning until at least `min` records arrived, at
 * least three fetches went out after joining (so an empty topic was really looked at), the
 * reader passed every partition's end offset of the start, and then
 * nothing more came for `idleMs` (so duplicates beyond the expected count are seen too); or
 * until `timeoutMs`. read_committed unless `readUncommitted` (to see aborted writes too).
 * Each record once per offset: `redeliveries.count` tells how many the reader handed out again.
 */
export async function drain(
  topics: string[],
  min: number,
  idleMs: number,
  timeoutMs: number,
  readUncommitted = false,
  redeliveries: { count: number } = { count: 0 },
): Promise<Consumed[]> {
  const consumer = kafka.consumer({
    groupId: `drain-${randomUUID()}`,
    readUncommitted,
    maxWaitTimeInMs: 500,
  });
  const records: Consumed[] = [];
  const positions = new Set<string>();
  // Where each partition ends now: reading stops only once the reader passed every end (a
  // count and a quiet spell alone could stop early while a leader was still being found).
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, number>();
  try {
    for (const topic of topics)
      for (const o of await admin.fetchTopicOffsets(topic))
        ends.set(`${topic}/${o.partition}`, Number(o.high));
  } finally {
    await admin.disconnect();
  }
  // kafkajs tells each batch's last offset, a trailing transaction marker included (a batch of
  // markers only too), in END_BATCH_PROCESS.
  const reached = new Map<string, number>();
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const key = `${payload.topic}/${payload.partition}`;
    reached.set(key, Math.max(reached.get(key) ?? 0, Number(payload.lastOffset) + 1));
  });
  const caughtUp = () => [...ends].every(([k, end]) => end === 0 || (reached.get(k) ?? 0) >= end);
  await consumer.connect();
  try {
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    let last = Date.now();
    let fetches = 0;
    consumer.on(consumer.events.FETCH, () => {
      fetches++;
    });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        last = Date.now();
        // A reader's redelivery (kafkajs hands out a batch again after a rebalance or a late
        // fetch) is the same record at the same offset: counted, not taken as a duplicate.
        const r = consumed(topic, message, partition);
        if (positions.has(r.at!)) {
          redeliveries.count++;
          return;
        }
        positions.add(r.at!);
        records.push(r);
      },
    });
    const deadline = Date.now() + timeoutMs;
    // Caught up, then idle; should the batches never show it, a long quiet spell ends the read.
    const quiet = () => Date.now() - last >= (caughtUp() ? idleMs : Math.max(5 * idleMs, 10_000));
    const done = () => records.length >= min && fetches >= 3 && quiet();
    while (Date.now() < deadline && !done()) await sleep(200);
  } finally {
    await consumer.disconnect();
  }
  return records;
}

export interface ExactlyOnce {
  records: number;
  verdicts: number;
  spills: number;
  audits: number;
  lost: number;
  duplicated: number;
  /** The records decoded (for further checks), without those `extra` set aside. */
  decoded: AuditLineRecord[];
  expected: AuditLineRecord[];
  /** Records the caller expects on top of the offline audit of `events`. */
  extra: AuditLineRecord[];
  /** The first few records lost or extra, named (for the report). */
  wrong: string[];
  /** Records the reader handed out again at an offset already read (not in the log twice). */
  redeliveries: number;
}

/** The exactly-once figures of a check, as the fault reports print them. */
export function exactlyOnceFigures(r: ExactlyOnce) {
  return {
    records: r.records,
    verdicts: r.verdicts,
    spillRequests: r.spills,
    audit: r.audits,
    lost: r.lost,
    duplicated: r.duplicated,
    readerRedeliveries: r.redeliveries,
    ...(r.wrong.length > 0 ? { wrong: r.wrong } : {}),
  };
}

const verdictKey = (r: { sessionId: string; inputSeq: number; requestId: string }) =>
  `${r.sessionId}/${r.inputSeq}/${r.requestId}`;

function keyOf(r: AuditLineRecord): string | null {
  if (r.record === 'verdict') return `verdict ${verdictKey(r)}`;
  if (r.record === 'spill-request') return `spill ${r.spillRequestId}`;
  if (r.record === 'audit') return `audit ${JSON.stringify(r)}`;
  return null;
}

/**
 * Everything the processor wrote for `events`, read_committed, against the offline audit of
 * the same events: per record kind, what is expected and missing (lost) or seen more than
 * once (duplicated). Audit records are compared whole (they carry no processing time).
 */
export async function exactlyOnce(
  c: Config,
  events: readonly ContextEvent[],
  timeoutMs: number,
  isExtra: (r: AuditLineRecord) => boolean = () => false,
): Promise<ExactlyOnce> {
  const expected = offline(events, c.graceMs).filter((r) => r.record !== 'dead-letter');
  const redeliveries = { count: 0 };
  const got = await drain(
    [c.verdictTopic, c.spillTopic, c.auditTopic],
    expected.length,
    3_000,
    timeoutMs,
    false,
    redeliveries,
  );
  const all = got.map((r) => decodeOutput(c, r));
  const extra = all.filter(isExtra);
  const decoded = all.filter((r) => !isExtra(r));
  // Where each copy of a record sits and who wrote it: two copies from one producer epoch
  // point at the producer, from two epochs at a batch processed twice.
  const copies = new Map<string, string[]>();
  all.forEach((r, i) => {
    const k = keyOf(r);
    if (k === null) return;
    const list = copies.get(k) ?? [];
    list.push(`${got[i]!.at} by ${got[i]!.writer}`);
    copies.set(k, list);
  });
  const want = new Map<string, number>();
  for (const r of expected) {
    const k = keyOf(r);
    if (k !== null) want.set(k, (want.get(k) ?? 0) + 1);
  }
  const seen = new Map<string, number>();
  for (const r of decoded) {
    const k = keyOf(r);
    if (k !== null) seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  let lost = 0;
  let duplicated = 0;
  const wrong: string[] = [];
  for (const [k, n] of want) {
    lost += Math.max(0, n - (seen.get(k) ?? 0));
    if (n > (seen.get(k) ?? 0)) wrong.push(`lost ${k}`);
  }
  for (const [k, n] of seen) {
    duplicated += Math.max(0, n - (want.get(k) ?? 0));
    if (n > (want.get(k) ?? 0))
      wrong.push(`extra at ${copies.get(k)!.join(' and ')}: ${k.slice(0, 200)}`);
  }
  return {
    redeliveries: redeliveries.count,
    wrong: wrong.slice(0, 5).map((w) => w.slice(0, 500)),
    records: decoded.length,
    verdicts: decoded.filter((r) => r.record === 'verdict').length,
    spills: decoded.filter((r) => r.record === 'spill-request').length,
    audits: decoded.filter((r) => r.record === 'audit').length,
    lost,
    duplicated,
    decoded,
    expected,
    extra,
  };
}

/** The assertions of contract §8 on an `exactlyOnce` result. */
export function expectExactlyOnce(r: ExactlyOnce): void {
  expect({ lost: r.lost, duplicated: r.duplicated }).toEqual({ lost: 0, duplicated: 0 });
  expect(r.verdicts).toBe(r.expected.filter((x) => x.record === 'verdict').length);
  expect(r.spills).toBe(r.expected.filter((x) => x.record === 'spill-request').length);
  expect(r.audits).toBe(r.expected.filter((x) => x.record === 'audit').length);
  expect(verdictMap(r.decoded)).toEqual(verdictMap(r.expected));
  // One spill request per REFUSE/SPILL verdict, with the id contract §6 derives from it.
  const spillIds = r.decoded.flatMap((x) =>
    x.record === 'spill-request' ? [x.spillRequestId] : [],
  );
  const spillVerdicts = r.decoded.flatMap((x) =>
    x.record === 'verdict' && x.decision === 'REFUSE' && x.action === 'SPILL'
      ? [x.spillRequestId]
      : [],
  );
  expect([...spillIds].sort()).toEqual([...spillVerdicts].sort());
}

/**
 * The input topic as delivered (JSON events), read_committed, in each partition's order: what
 * the processor really saw, duplicates of a retried send included. Sessions are keyed, so a
 * session's events keep their order when the partitions are concatenated.
 */
export async function deliveredInput(c: Config, min: number): Promise<ContextEvent[]> {
  const got = await drain([c.inputTopic], min, 2_000, 120_000);
  return got.map((r) => JSON.parse(r.value!.toString('utf8')) as ContextEvent);
}

/** A state with the processing-time stamp of its stored verdicts zeroed (contract §7). */
function timeless(s: SessionState): SessionState {
  return { ...s, verdicts: s.verdicts.map((v) => ({ ...v, decidedAt: 0 })) };
}

/** A state's bytes, timeless. */
function comparable(s: SessionState): string {
  return serializeState(timeless(s)).toString('base64');
}

/**
 * Per-session state, the changelog's last record per session against the offline replay of the
 * same events (apart from the stored verdicts' decidedAt, which is processing time): sessions
 * whose state differs, or that only one side has.
 */
export async function statesVersusReplay(
  c: Config,
  events: readonly ContextEvent[],
): Promise<{ sessions: number; differing: string[]; detail: string[] }> {
  const sessions = new SessionsInPlace();
  const replay = new Replay(sessions);
  events.forEach((e, i) => replay.line(JSON.stringify(e), i + 1));
  const want = new Map<string, string>();
  const wantState = new Map<string, SessionState>();
  for (const [id, state] of sessions.entries()) {
    want.set(id, comparable(state));
    wantState.set(id, timeless(state));
  }
  const got = new Map<string, string>();
  const gotState = new Map<string, SessionState>();
  const tombstoned = new Set<string>();
  for (const r of await drain([c.changelogTopic], want.size, 2_000, 120_000)) {
    const sessionId = r.key === null ? null : sessionOfKey(r.key);
    if (sessionId === null) continue; // a barrier or an input position
    if (r.value === null) {
      got.delete(sessionId);
      gotState.delete(sessionId);
      tombstoned.add(sessionId);
    } else {
      const state = deserializeState(r.value);
      got.set(sessionId, comparable(state));
      gotState.set(sessionId, timeless(state));
    }
  }
  // A closed session past its grace (by wall clock; the simulator's events are stamped in the
  // past) is freed with a tombstone (contract §4): that is its state, not a difference.
  const freed = (id: string) => {
    const closedAt = wantState.get(id)?.closedAt ?? null;
    return (
      closedAt !== null &&
      !got.has(id) &&
      tombstoned.has(id) &&
      Date.now() - closedAt > c.graceMs + c.sweepDelayMs
    );
  };
  const differing = [...new Set([...want.keys(), ...got.keys()])].filter(
    (id) => want.get(id) !== got.get(id) && !freed(id),
  );
  return {
    sessions: want.size,
    differing,
    detail: differing
      .slice(0, 3)
      .map((id) => stateDifference(id, wantState.get(id), gotState.get(id))),
  };
}

/** Which fields of a session's state differ between the replay and the changelog (for the report). */
function stateDifference(
  id: string,
  want: SessionState | undefined,
  got: SessionState | undefined,
): string {
  if (want === undefined || got === undefined)
    return `${id}: only in the ${want === undefined ? 'changelog' : 'replay'}`;
  const w = want as unknown as Record<string, unknown>;
  const g = got as unknown as Record<string, unknown>;
  const fields = Object.keys({ ...w, ...g }).filter(
    (k) => JSON.stringify(w[k]) !== JSON.stringify(g[k]),
  );
  const show = (x: unknown) =>
    JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))?.slice(0, 160);
  return `${id}: ${fields.map((k) => `${k} replay ${show(w[k])} changelog ${show(g[k])}`).join('; ')}`;
}

/** Figures for docs/guarantees.md, printed once per scenario. */
export function report(name: string, figures: Record<string, unknown>): void {
  process.stderr.write(`[faults] ${name}: ${JSON.stringify(figures)}\n`);
}

export type ProxyMode = 'up' | '503' | 'refused';

/** An HTTP proxy to the registry that can answer 503 or refuse connections for a while. */
export interface RegistryProxy {
  url: string;
  requests: { forwarded: number; failed: number };
  set(mode: ProxyMode): Promise<void>;
  close(): Promise<void>;
}

export async function startRegistryProxy(target: string): Promise<RegistryProxy> {
  const t = new URL(target);
  let mode: ProxyMode = 'up';
  const requests = { forwarded: 0, failed: 0 };
  const sockets = new Set<Socket>();
  const handler = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    if (mode !== 'up') {
      requests.failed++;
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ error_code: 50301, message: 'registry proxy switched off by the test' }),
      );
      return;
    }
    requests.forwarded++;
    const upstream = request(
      {
        host: t.hostname,
        port: t.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: t.host },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  };
  let server: Server = createServer(handler);
  const port = await freePort();
  const listen = async (s: Server) => {
    s.on('connection', (sock: Socket) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((r, j) => {
      s.once('error', j);
      s.listen(port, '127.0.0.1', () => r());
    });
  };
  const shut = async (s: Server) => {
    for (const sock of sockets) sock.destroy();
    await new Promise<void>((r) => s.close(() => r()));
  };
  await listen(server);
  let listening = true;
  return {
    url: `http://127.0.0.1:${port}${t.pathname.replace(/\/+$/, '')}`,
    requests,
    async set(next: ProxyMode) {
      mode = next;
      if (next === 'refused' && listening) {
        await shut(server);
        listening = false;
      } else if (next !== 'refused' && !listening) {
        server = createServer(handler);
        await listen(server);
        listening = true;
      }
    },
    async close() {
      if (listening) await shut(server);
      listening = false;
    },
  };
}
