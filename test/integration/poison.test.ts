/**
 * No single record, however built, stops a partition (contract §8) — on the real broker and
 * registry. The whole poison corpus in one batch of one partition, then a good session's
 * request: every poison record is in the DLQ with its code, the good verdict is read
 * read_committed within 30 s, no transaction aborts, the lag goes to 0 and /readyz stays 200.
 * Then a topic's limit lowered under a running processor: the broker's MESSAGE_TOO_LARGE is
 * learned, and the record behind it dead-lettered instead of retried for ever.
 */
import { readFileSync } from 'node:fs';
import { ConfigResourceTypes, type Admin, type Message } from 'kafkajs';
import { ENV_NAMES, type Config } from '../../src/config/config';
import type { ContextEvent } from '../../src/engine/events';
import { keyOn, longKey } from '../support/partitionKeys';
import { SessionBuilder } from '../support/sessionBuilder';
import { until } from '../support/until';
import { faultLogFile, spawnProcessor, waitFor, type Child } from './faults/harness';
import { decodeOutput, kafka, readTopics, testConfig, type Consumed } from './pipeline';

/**
 * The processor runs as `compaction-guard run` in a process of its own (dist/: `npm run build`
 * first), as in production: in jest's sandbox `Math.imul` runs ~150× slower, and the string
 * hashes of a 540 KB id would hold the event loop for seconds.
 */
async function run(c: Config, name: string): Promise<Child & { logFile: string }> {
  // At info, its log names every join, revocation and resync: what a 503 seen by the readiness
  // check below was (the check quotes those lines when it fails).
  const logFile = faultLogFile(name);
  const child = await spawnProcessor(c, logFile, { [ENV_NAMES.logLevel]: 'info' });
  await waitFor('the processor to listen', async () => (await readyz(child)) > 0, 60_000);
  return { ...child, logFile };
}

async function stop(child: Child | null): Promise<void> {
  if (child === null) return;
  child.proc.kill('SIGTERM');
  await child.exited;
}

jest.setTimeout(180_000);

const json = (e: ContextEvent | object) => JSON.stringify(e);

async function createTopic(admin: Admin, topic: string, configs: Record<string, string> = {}) {
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic,
        numPartitions: 3,
        replicationFactor: 1,
        configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
      },
    ],
  });
}

async function metric(child: Child, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${child.httpPort}/metrics`)).text();
  const m = new RegExp(`^${line.source} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${line.source} in /metrics`);
  return Number(m[1]);
}

const readyz = async (child: Child) => (await readyzAnswer(child)).status;

/** /readyz's status and, when unready, the problems it names. */
async function readyzAnswer(child: Child): Promise<ReadyzAnswer> {
  const res = await fetch(`http://127.0.0.1:${child.httpPort}/readyz`);
  const body = (await res.json()) as { problems?: string[] };
  return { at: Date.now(), status: res.status, problems: body.problems ?? [] };
}

interface ReadyzAnswer {
  /** When it was asked, in epoch ms (the log's `time`). */
  at: number;
  status: number;
  problems: string[];
}

/**
 * The answers after the first 200 that are not 200, each with the processor's log lines (join,
 * revocation, resync, warnings) of the two seconds before it: empty when it stayed ready.
 */
function dropsAfterReady(seen: ReadyzAnswer[], logFile: string) {
  const first = seen.findIndex((a) => a.status === 200);
  const log = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{') && !l.includes('"dead letter"'))
    .map((l) => ({ time: (JSON.parse(l) as { time: number }).time, line: l }));
  return seen
    .slice(first < 0 ? seen.length : first)
    .filter((a) => a.status !== 200)
    .map((a) => ({
      ...a,
      at: new Date(a.at).toISOString(),
      log: log.filter((l) => l.time > a.at - 2_000 && l.time <= a.at + 500).map((l) => l.line),
    }));
}

/** Polls /readyz every 200 ms until stopped; the answers seen. */
function watchReadiness(child: Child): { stop: () => Promise<ReadyzAnswer[]> } {
  const seen: ReadyzAnswer[] = [];
  let on = true;
  const sample = () =>
    readyzAnswer(child).catch((e: Error) => ({
      at: Date.now(),
      status: -1,
      problems: [e.message],
    }));
  const loop = (async () => {
    while (on) {
      seen.push(await sample());
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    // One answer more at the end: a run whose work takes less than one 200 ms interval after
    // readiness (platformatic's, in CI) would otherwise have sampled only before it.
    stop: async () => {
      on = false;
      await loop;
      seen.push(await sample());
      return seen;
    },
  };
}

/** The good session: opened, a few turns, a request that leaves nothing out (APPROVE). */
function goodSession(id: string): ContextEvent[] {
  return new SessionBuilder(id, Date.now()).open().turns(3).request('good-1', 'TURNS', 0, 0, 0)
    .events;
}

const onPartition0 = (key: Buffer | string, value: Buffer | string): Message => ({
  key,
  value,
  partition: 0,
});

/** A session id that maps to partition 0 of the 3 (written there, it is on its own partition). */
const on0 = (name: string) => keyOn(name, 0, 3);

describe('the poison corpus on the real broker', () => {
  it('dead-letters every poison record with its code and answers the good session within 30 s, with no aborted transaction', async () => {
    const c: Config = testConfig();
    const admin = kafka.admin();
    await admin.connect();
    let running: (Child & { logFile: string }) | null = null;
    try {
      // Taking the whole corpus (1.2 MB) as one record batch.
      await createTopic(admin, c.inputTopic, { 'max.message.bytes': String(4 * 1024 * 1024) });
      await createTopic(admin, c.changelogTopic, {
        'cleanup.policy': 'compact',
        'min.compaction.lag.ms': '0',
      });
      // A DLQ taking 256 KiB (the big poison records' dead letters are cut to fit), and an audit
      // topic taking 4 KiB (an advisory quoting a 4 KB reason cannot go there).
      await createTopic(admin, c.dlqTopic, { 'max.message.bytes': String(256 * 1024) });
      await createTopic(admin, c.auditTopic, { 'max.message.bytes': '4096' });

      // A session whose committed state does not decode (a corrupted changelog record).
      const producer = kafka.producer();
      await producer.connect();
      const corruptId = on0('corrupt-state');
      await producer.send({
        topic: c.changelogTopic,
        messages: [onPartition0(corruptId, Buffer.from([0x7f, 0xde, 0xad]))],
      });

      const t0 = Date.now();
      const deep = `{"type":"TurnAppended","sessionId":"deep","seq":0,"eventId":"d","occurredAt":${t0},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
      const turnBuilder = new SessionBuilder('far-turn', t0).open();
      const farTurn = {
        ...turnBuilder.turn(10).last,
        turn: 9_007_199_254_740_990,
      };
      const hugeRequest = {
        type: 'CompactionRequested',
        sessionId: 'unknown-huge-request',
        seq: 0,
        eventId: 'e0',
        occurredAt: t0,
        requestId: 'r'.repeat(540 * 1024),
        unit: 'TURNS',
        summaryInput: { start: 0, end: 1 },
        tailStart: 1,
        occupancyTokens: null,
      };
      const misrouted = new SessionBuilder('misrouted', t0).open().events[0]!;
      const ack = new SessionBuilder('long-reason', t0).open().turns(2);
      ack.acknowledge('TURNS', 0, 1, 'oncall@example.com', 'r'.repeat(4096));
      const corrupt = new SessionBuilder(corruptId, t0).skipSeq(7).turns(1).events[0]!;
      const goodId = on0('good-session');
      const good = goodSession(goodId);
      // A request of a session of partition 1, written to partition 0 (contract §6, rev 12).
      const elsewhere = keyOn('elsewhere', 1, 3);
      const misplaced = new SessionBuilder(elsewhere, t0)
        .open()
        .turns(1)
        .request('x', 'TURNS', 0, 0, 0);

      /** Each record, and the dead-letter code it must get (null: not a dead letter). */
      const corpus: [string, Message, string | null][] = [
        ['nested 5,000 deep (10 KB)', onPartition0('deep', deep), 'TOO_DEEP'],
        ...turnBuilder.events
          .slice(0, 1)
          .map((e): [string, Message, null] => [
            'far-turn opened',
            onPartition0(e.sessionId, json(e)),
            null,
          ]),
        [
          'a TurnAppended at turn 9007199254740990',
          onPartition0('far-turn', json(farTurn)),
          'NUMBER_TOO_LARGE',
        ],
        [
          'a request on an unknown session with a 540 KB requestId',
          onPartition0(hugeRequest.sessionId, json(hugeRequest)),
          'TOO_LONG',
        ],
        [
          'a KEY_MISMATCH with a 600 KB key',
          onPartition0(longKey(600 * 1024, 0, 3, 'home'), json(misrouted)),
          'KEY_MISMATCH',
        ],
        [
          'a WRONG_PARTITION with a 600 KB key',
          onPartition0(longKey(600 * 1024, 0, 3, 'away'), json(misrouted)),
          'WRONG_PARTITION',
        ],
        [
          "a request of partition 1's session on partition 0",
          onPartition0(elsewhere, json(misplaced.last)),
          'WRONG_PARTITION',
        ],
        ...ack.events
          .slice(0, -1)
          .map((e): [string, Message, null] => [
            'long-reason session',
            onPartition0(e.sessionId, json(e)),
            null,
          ]),
        [
          'a LossAcknowledged whose advisory exceeds the audit topic',
          onPartition0('long-reason', json(ack.last)),
          'OUTPUT_TOO_LARGE',
        ],
        [
          'an event of a session whose stored state does not decode',
          onPartition0(corruptId, json(corrupt)),
          'STATE_UNREADABLE',
        ],
        ...good.map((e): [string, Message, null] => [
          'good session',
          onPartition0(e.sessionId, json(e)),
          null,
        ]),
      ];
      // One produce request: one batch of partition 0 for the processor's first fetch.
      await producer.send({ topic: c.inputTopic, acks: -1, messages: corpus.map(([, m]) => m) });
      await producer.disconnect();
      const produced = Date.now();

      running = await run(c, 'poison');
      const readiness = watchReadiness(running);
      const child = running;
      // Its topics exist once it is ready (read before, the verdict topic may not yet).
      await waitFor('ready', async () => (await readyz(child)) === 200, 60_000);
      const verdicts = await readTopics(
        [c.verdictTopic],
        (rs) => rs.some((r) => r.key === goodId),
        30_000,
      );
      const answeredAfter = Date.now() - produced;
      const good1 = verdicts.filter((r) => r.key === goodId).map((r) => decodeOutput(c, r))[0];
      expect(good1).toMatchObject({ record: 'verdict', requestId: 'good-1', decision: 'APPROVE' });
      expect(answeredAfter).toBeLessThan(30_000);

      const expected = corpus.flatMap(([what, , code], offset) =>
        code === null ? [] : [{ offset: String(offset), what, code }],
      );
      const dlq = await readTopics([c.dlqTopic], (rs) => rs.length >= expected.length, 30_000);
      // Dead letters keep their record's key, so they spread over the DLQ's partitions.
      const byOffset = [...dlq].sort(
        (a, b) => Number(a.headers['cg.source.offset']) - Number(b.headers['cg.source.offset']),
      );
      const got = byOffset.map((r: Consumed) => ({
        offset: r.headers['cg.source.offset'],
        what: corpus[Number(r.headers['cg.source.offset'])]![0],
        code: r.headers['cg.error.code'],
      }));
      expect(got).toEqual(expected);
      for (const r of dlq) {
        expect(Buffer.byteLength(r.headers['cg.error.message']!)).toBeLessThanOrEqual(1024);
        expect((r.key?.length ?? 0) + (r.value?.length ?? 0)).toBeLessThan(256 * 1024);
      }
      // The 600 KB keys did not fit the 256 KiB DLQ: cut, with their length and digest.
      const bigKeyLetters = dlq.filter((r) => r.headers['cg.original.key.length'] !== undefined);
      expect(bigKeyLetters.map((r) => r.headers['cg.error.code']).sort()).toEqual([
        'KEY_MISMATCH',
        'WRONG_PARTITION',
      ]);
      for (const keyLetter of bigKeyLetters)
        expect(keyLetter.headers).toMatchObject({
          'cg.truncated': 'key,value',
          'cg.original.key.length': String(600 * 1024),
          'cg.original.key.sha256': expect.stringMatching(/^[0-9a-f]{64}$/),
        });

      await until('lag 0', async () =>
        (await metric(running!, /compaction_guard_consumer_lag_records\{partition="0"\}/)) === 0
          ? true
          : undefined,
      );
      expect(
        await metric(running, /compaction_guard_transactions_total\{outcome="aborted"\}/),
      ).toBe(0);
      expect(
        await metric(running, /compaction_guard_dead_letters_total\{code="STATE_UNREADABLE"\}/),
      ).toBe(1);
      const seen = await readiness.stop();
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.some((a) => a.status === 200)).toBe(true);
      // Ready from its first restore on, and never unready again; a drop names its problems and
      // the processor's log lines of the two seconds before it.
      expect(dropsAfterReady(seen, running.logFile)).toEqual([]);
      expect(await readyz(running)).toBe(200);
    } finally {
      await stop(running);
      await admin.disconnect();
    }
  });

  it("learns a topic's lower limit from the broker's MESSAGE_TOO_LARGE: the record is dead-lettered, the partition goes on", async () => {
    const c: Config = testConfig();
    const running = await run(c, 'too-large');
    const admin = kafka.admin();
    await admin.connect();
    try {
      await waitFor('ready', async () => (await readyz(running)) === 200, 60_000);
      // Lowered under the running processor, which read 1 MiB at start-up.
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: c.verdictTopic,
            configEntries: [{ name: 'max.message.bytes', value: '1500' }],
          },
        ],
      });
      await new Promise((r) => setTimeout(r, 2_000));
      const t0 = Date.now();
      // A refusal naming many holes: its verdict is several kilobytes.
      const refused = new SessionBuilder('big-verdict', t0).open();
      for (let i = 0; i < 40; i++) refused.turn(10, 'USER', i % 2 === 0 ? ['CONSTRAINT'] : []);
      for (let i = 0; i < 16; i++) refused.truncate('TURNS', 2 * i, 2 * i + 1);
      refused.request('r-'.padEnd(200, 'x'), 'TURNS', 20, 30, 30);
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: c.inputTopic,
        acks: -1,
        messages: refused.events.map((e) => onPartition0(e.sessionId, json(e))),
      });
      const dlq = await readTopics([c.dlqTopic], (rs) => rs.length >= 1, 60_000);
      expect(dlq.map((r) => [r.headers['cg.error.code'], r.headers['cg.source.offset']])).toEqual([
        ['OUTPUT_TOO_LARGE', String(refused.events.length - 1)],
      ]);
      expect(dlq[0]!.headers['cg.error.message']).toMatch(
        /more than topic .* takes \(max\.message\.bytes \d+\)/,
      );
      // The partition goes on: a later request is answered.
      const later = goodSession(on0('after'));
      await producer.send({
        topic: c.inputTopic,
        acks: -1,
        messages: later.map((e) => onPartition0(e.sessionId, json(e))),
      });
      await producer.disconnect();
      const verdicts = await readTopics(
        [c.verdictTopic],
        (rs) => rs.some((r) => r.key === later[0]!.sessionId),
        30_000,
      );
      expect(verdicts.map((r) => r.key)).toContain(later[0]!.sessionId);
      // One transaction aborted (the refused one), then none.
      expect(
        await metric(running, /compaction_guard_transactions_total\{outcome="aborted"\}/),
      ).toBe(1);
      expect(await readyz(running)).toBe(200);
    } finally {
      await stop(running);
      await admin.disconnect();
    }
  });
});
