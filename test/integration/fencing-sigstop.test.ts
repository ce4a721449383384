/**
 * Fencing proven on the real broker: a processor process that stalls (SIGSTOP) longer than the
 * session timeout while load flows loses its partitions to the other process of the group, which
 * processes them; when it resumes (SIGCONT), nothing it had begun before the stall may commit,
 * and it rejoins the group as a new member. What is checked, from Kafka alone:
 * - every record of the outputs and the changelog appended before the resume (below the high
 *   watermark then, with no transaction left open) is committed at the end exactly when it was
 *   committed before the resume: the stalled process's open transaction, if any, never commits
 *   after the new owner took over;
 * - along each partition, a producer id's epoch never goes down among committed records: no
 *   record of a fenced producer is committed after its successor's (with one producer per input
 *   partition, the new owner's producer of the partition is that successor);
 * - every request has exactly one verdict (and spill requests and audit records as the offline
 *   audit of the same events says), and the changelog's state is the replay's;
 * - the group's committed offsets reach the end of the input.
 * And from the processes' own logs (JSON lines): the stalled one held partitions before the
 * stall, the other one was assigned all of them during it, and the stalled one joined again
 * after it.
 *
 * Run on both transports (describe.each): kafkajs, whose producer per partition is fenced by
 * its epoch, and platformatic, whose one producer per process is fenced by the group's
 * generation (KIP-447); CG_KAFKA_CLIENT narrows it to one. Both processes are killed at the
 * end, whatever happened.
 */
import { readFileSync } from 'node:fs';
import { Admin, FetchIsolationLevels, ListOffsetTimestamps } from '@platformatic/kafka';
import type { Config } from '../../src/config/config';
import { brokers, codecFor, liveFleet, produceEvents, testConfig } from './pipeline';
import {
  drain,
  exactlyOnce,
  exactlyOnceFigures,
  expectExactlyOnce,
  faultLogFile,
  httpStatus,
  killHard,
  report,
  sleep,
  spawnProcessor,
  statesVersusReplay,
  waitAllCommitted,
  waitFor,
  type Child,
} from './faults/harness';
import type { Consumed } from './pipeline';

jest.setTimeout(480_000);

const CLIENTS = process.env.CG_KAFKA_CLIENT
  ? [process.env.CG_KAFKA_CLIENT]
  : ['kafkajs', 'platformatic'];

/** The processor's "group joined" lines of a log file: when, and the whole assignment. */
function joins(logFile: string): { time: number; assigned: number[] }[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (!line.includes('"group joined"')) return [];
      try {
        const j = JSON.parse(line) as { time: number; msg: string; assigned: number[] };
        return j.msg === 'group joined' ? [{ time: j.time, assigned: j.assigned }] : [];
      } catch {
        return [];
      }
    });
}

/** Lines of a log file with `text` (for the report). */
const count = (logFile: string, text: string) =>
  readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes(text)).length;

/** Where a consumed record is: topic, partition, offset; and its writer's producer id and epoch. */
function placed(r: Consumed): { tp: string; offset: number; pid: string; epoch: number } {
  const [, tp, offset] = /^(.+)@(\d+)$/.exec(r.at!)!;
  const [, pid, epoch] = /^producer (\S+) epoch (\d+)$/.exec(r.writer!)!;
  return { tp: tp!, offset: Number(offset), pid: pid!, epoch: Number(epoch) };
}

/** Each partition's offsets of `topics` at `isolation`: `topic/partition` → offset. */
async function endOffsets(
  topics: string[],
  isolation: 'committed' | 'uncommitted',
): Promise<Map<string, number>> {
  const admin = new Admin({ clientId: 'cg-it-fencing', bootstrapBrokers: brokers });
  try {
    const { topics: meta } = await admin.metadata({ topics, forceUpdate: true });
    const listed = await admin.listOffsets({
      topics: topics.map((name) => ({
        name,
        partitions: meta.get(name)!.partitions.map((_, partitionIndex) => ({
          partitionIndex,
          timestamp: ListOffsetTimestamps.LATEST,
        })),
      })),
      isolationLevel:
        isolation === 'committed'
          ? FetchIsolationLevels.READ_COMMITTED
          : FetchIsolationLevels.READ_UNCOMMITTED,
    });
    return new Map(
      listed.flatMap((t) =>
        t.partitions.map((p) => [`${t.name}/${p.partitionIndex}`, Number(p.offset)] as const),
      ),
    );
  } finally {
    await admin.close();
  }
}

/** Records of a committed producer epoch lower than one its producer id committed earlier on the partition. */
function epochsGoingDown(records: Consumed[]): string[] {
  const byPartition = new Map<string, ReturnType<typeof placed>[]>();
  for (const r of records) {
    const p = placed(r);
    byPartition.set(p.tp, [...(byPartition.get(p.tp) ?? []), p]);
  }
  const wrong: string[] = [];
  for (const [tp, rs] of byPartition) {
    const highest = new Map<string, number>();
    for (const r of rs.sort((a, b) => a.offset - b.offset)) {
      const top = highest.get(r.pid) ?? -1;
      if (r.epoch < top)
        wrong.push(`${tp}@${r.offset}: producer ${r.pid} epoch ${r.epoch} < ${top}`);
      highest.set(r.pid, Math.max(top, r.epoch));
    }
  }
  return wrong;
}

const ready = async (child: Child) => (await httpStatus(child.httpPort, '/readyz')) === 200;

describe.each(CLIENTS)('fencing on the %s transport', (client) => {
  it('a process stalled (SIGSTOP) past the session timeout commits nothing after its partitions moved, then rejoins; exactly once', async () => {
    const started = Date.now();
    const c: Config = testConfig({
      partitions: 4,
      sessionTimeoutMs: 6_000,
      transactionTimeoutMs: 5_000,
    });
    const { events } = liveFleet({ sessions: 48, events: 4_000, seed: 303, faultyShare: 0.2 });
    const parts = Array.from({ length: 40 }, (_, i) => events.slice(i * 100, (i + 1) * 100));
    const codec = codecFor(c);
    const env = { CG_KAFKA_CLIENT: client, CG_LOG_LEVEL: 'info', CG_LOG_FORMAT: 'json' };
    const [logA, logB] = [faultLogFile('sigstop-a'), faultLogFile('sigstop-b')];
    const outputs = [c.verdictTopic, c.spillTopic, c.auditTopic, c.changelogTopic];
    let a: Child | null = null;
    let b: Child | null = null;
    try {
      a = await spawnProcessor(c, logA, env);
      await waitFor('the first process to be ready', () => ready(a!), 120_000);
      b = await spawnProcessor(c, logB, env);
      await waitFor(
        'both processes to share the partitions',
        async () =>
          (await ready(a!)) &&
          (await ready(b!)) &&
          (joins(logA).at(-1)?.assigned.length ?? 0) > 0 &&
          (joins(logB).at(-1)?.assigned.length ?? 0) > 0,
        120_000,
      );
      for (const part of parts.slice(0, 5)) await produceEvents(c, part, codec);
      // Load that flows across the stall.
      const loading = (async () => {
        for (const part of parts.slice(5, 25)) {
          await produceEvents(c, part, codec);
          await sleep(400);
        }
      })();
      await sleep(2_000);
      const heldByA = joins(logA).at(-1)!.assigned;
      a.proc.kill('SIGSTOP');
      const stoppedAt = Date.now();
      // The other process is assigned every partition, and processes them.
      await waitFor(
        'the other process to be assigned every partition',
        async () =>
          joins(logB).some((j) => j.time > stoppedAt && j.assigned.length === c.partitions),
        90_000,
      );
      const takenAt = joins(logB).find((j) => j.time > stoppedAt)!.time;
      await loading;
      await waitAllCommitted(c, 120_000);
      // Past the session and the transaction timeouts, nothing of the stalled one is pending:
      // every output partition's last stable offset is its high watermark.
      await sleep(
        Math.max(0, stoppedAt + c.sessionTimeoutMs + c.transactionTimeoutMs - Date.now()),
      );
      let ends = new Map<string, number>();
      await waitFor(
        'no transaction left open on the outputs',
        async () => {
          const [stable, high] = await Promise.all([
            endOffsets(outputs, 'committed'),
            endOffsets(outputs, 'uncommitted'),
          ]);
          ends = high;
          return [...high].every(([tp, h]) => stable.get(tp) === h);
        },
        90_000,
        1_000,
      );
      const below = (r: Consumed) => {
        const p = placed(r);
        return p.offset < (ends.get(p.tp) ?? 0);
      };
      const before = (await drain(outputs, 1, 2_000, 120_000)).filter(below);
      const committedBefore = new Set(before.map((r) => r.at!));
      a.proc.kill('SIGCONT');
      const resumedAt = Date.now();
      const stalledMs = resumedAt - stoppedAt;
      await waitFor(
        'the stalled process to join the group again',
        async () => joins(logA).some((j) => j.time > resumedAt),
        120_000,
      );
      await waitFor(
        'both processes to be ready again',
        async () => (await ready(a!)) && (await ready(b!)),
        120_000,
      );
      for (const part of parts.slice(25)) await produceEvents(c, part, codec);
      await waitAllCommitted(c, 180_000);

      const after = await drain(outputs, before.length, 3_000, 120_000);
      // Appended before the resume: committed now exactly when committed then.
      const appendedBefore = after.filter(below);
      const committedLate = appendedBefore.filter((r) => !committedBefore.has(r.at!));
      const stillThere = new Set(appendedBefore.map((r) => r.at!));
      const lostLate = [...committedBefore].filter((at) => !stillThere.has(at));
      const r = await exactlyOnce(c, events, 120_000);
      const states = await statesVersusReplay(c, events);
      report(`SIGSTOP fencing (${client})`, {
        heldByStalled: heldByA,
        stalledMs,
        takeoverAfterMs: takenAt - stoppedAt,
        stalledRejoins: joins(logA).filter((j) => j.time > resumedAt).length,
        stalledBatchesNotCommitted: count(logA, 'batch not committed'),
        committedBeforeResume: committedBefore.size,
        committedLate: committedLate.slice(0, 5).map((x) => `${x.at} by ${x.writer}`),
        ...exactlyOnceFigures(r),
        statesDiffering: states.differing.length,
        seconds: Math.round((Date.now() - started) / 1000),
        logs: [logA, logB],
      });
      expect(heldByA.length).toBeGreaterThan(0);
      expect(stalledMs).toBeGreaterThan(c.sessionTimeoutMs);
      expect(takenAt - stoppedAt).toBeGreaterThan(0);
      expect(committedLate.map((x) => `${x.at} by ${x.writer}`)).toEqual([]);
      expect(lostLate).toEqual([]);
      expect(epochsGoingDown(after)).toEqual([]);
      expectExactlyOnce(r);
      expect(states.detail).toEqual([]);
      // The stalled process is alive and serving again, with partitions of its own.
      expect(a.proc.exitCode).toBeNull();
      expect(joins(logA).at(-1)!.assigned.length).toBeGreaterThan(0);
    } finally {
      for (const child of [a, b]) {
        if (child === null) continue;
        child.proc.kill('SIGCONT');
        child.proc.kill('SIGTERM');
      }
      await Promise.all(
        [a, b].map(async (child) => {
          if (child === null) return;
          await Promise.race([child.exited, sleep(15_000)]);
          await killHard(child);
        }),
      );
      codec.close();
    }
  });
});
