/**
 * Amplification benchmark (not a test): output bytes per input byte, by input record shape,
 * through the processor's own planning path without Kafka (decodeForBatch → BatchPlanner, the
 * outputs Avro-encoded with the registry's 5-byte header, dead letters and changelog records as
 * the processor writes them, transactions cut by the default budget and committed in turn). For
 * each shape a setup (not counted) builds the session the attack needs; then `--records` copies
 * of the attack record (each with its own ids) are counted: input bytes and output bytes by
 * topic, both as the broker's record estimate (`estimatedBytes`: key, value, headers, framing).
 * The worst shape's ratio times a produce quota on the input topic bounds the output rate
 * (docs/operations.md, "Bounded work per transaction").
 *
 *   npm run bench:amplification                     # 2,000 attack records per shape
 *   npm run bench:amplification -- --records 200    # fewer
 *   npm run bench:amplification -- --json
 */
import * as os from 'node:os';
import type { ContextEvent } from '../src/engine/events';
import { engineOptions } from '../src/engine';
import { DEFAULTS } from '../src/config/config';
import { decodeForBatch } from '../src/kafka/batch/decoder';
import { PlanLessons, type BatchPlan, type OutputEncoder } from '../src/kafka/batch/plan';
import { planBatch } from '../src/kafka/batch/planBatch';
import { estimatedBytes } from '../src/kafka/outputChunks';
import type { RawRecord } from '../src/kafka/records';
import { RefusedFilter } from '../src/kafka/capacity/refusedFilter';
import { SessionStates } from '../src/kafka/sessionStates';
import type { RegistryCodec } from '../src/registry/codec';
import { auditRecordType, spillRequestType, verdictType } from '../src/schema/schemas';
import { encodeEventAvro } from '../src/schema/decodeEvent';
import { parseBenchArgs } from './args';
import { fragmented, shortRequest } from './amplificationShapes';

const { options: o, json } = parseBenchArgs(
  process.argv.slice(2),
  { full: { records: 2_000 }, quick: { records: 200 } },
  { '--records': 'records' },
  (n) => Number.isInteger(n) && n > 0,
);

const header = Buffer.alloc(5); // magic byte and schema id, as the registry codec writes them
const ENCODER: OutputEncoder = {
  encodeVerdict: (v) => Buffer.concat([header, verdictType.toBuffer(v)]),
  encodeSpillRequest: (r) => Buffer.concat([header, spillRequestType.toBuffer(r)]),
  encodeAudit: (a) => Buffer.concat([header, auditRecordType.toBuffer(a)]),
};
const T0 = 1_767_225_600_000;
const ID = 's'; // the shortest session id: its bytes are in the input and in every output

interface Shape {
  name: string;
  what: string;
  setup: ContextEvent[];
  /** The i-th attack record's value (JSON text) and key, and the event it is, when it is one. */
  attack(i: number): { key: string; value: string; event?: ContextEvent };
}

const json1 = (e: object) => JSON.stringify(e);
const event = (e: ContextEvent) => ({ key: e.sessionId, value: json1(e), event: e });

function shapes(): Shape[] {
  const frag = fragmented(400, ID, T0);
  const request = (i: number, seq: number | null, summaryStart: number) =>
    shortRequest(ID, i, seq, T0 + 10_000 + i, summaryStart);
  return [
    {
      name: 'refused-pinned-holes',
      what: 'a short in-band request on a 400-turn session pinned every other turn, leaving 100 pins out (REFUSE, reasons with holes, a spill request)',
      setup: frag.events,
      attack: (i) => event(request(i, frag.seq + i, 200)),
    },
    {
      name: 'refused-pinned-holes-redelivered-seq',
      what: 'the same request, every copy with the same seq (a duplicate seq: each a new eventId)',
      setup: frag.events,
      attack: (i) => event(request(i, frag.seq, 200)),
    },
    {
      name: 'unknown-session',
      what: 'a request of a session never opened (REFUSE UNKNOWN_SESSION), a new id each',
      setup: [],
      attack: (i) => {
        return event({ ...request(i, 0, 0), sessionId: `u${i}` });
      },
    },
    {
      name: 'malformed-request',
      what: 'a CompactionRequested missing its fields (dead-lettered)',
      setup: frag.events,
      attack: (i) => ({
        key: ID,
        value: json1({ type: 'CompactionRequested', sessionId: ID, requestId: `r${i}` }),
      }),
    },
    {
      name: 'not-json',
      what: 'a record that is not JSON (a dead letter: the record and headers)',
      setup: [],
      attack: (i) => ({ key: ID, value: `x${i}` }),
    },
    {
      name: 'new-session',
      what: 'a SessionOpened of a new session each (a changelog state each)',
      setup: [],
      attack: (i) => {
        const [opened] = fragmented(0, `n${i}`, T0).events;
        return event(opened!);
      },
    },
  ];
}

const raw = (key: string, value: string, offset: number): RawRecord => ({
  key: Buffer.from(key),
  value: Buffer.from(value),
  offset: String(offset),
});

const codec = {} as RegistryCodec; // JSON input: decoding needs no registry

/** Records through transactions as the processor cuts them, each committed before the next. */
async function run(
  records: readonly RawRecord[],
  committed: SessionStates,
  refused: RefusedFilter,
  count?: Map<string, number>,
): Promise<number> {
  let left = records;
  let transactions = 0;
  while (left.length > 0) {
    const next = String(Number(left[left.length - 1]!.offset) + 1);
    const plan: BatchPlan = await planBatch(
      { topic: DEFAULTS.inputTopic, partition: 0 },
      left,
      next,
      {
        config: DEFAULTS,
        encoder: ENCODER,
        engine: engineOptions(),
        committed,
        clock: () => T0 + 60_000,
        timer: () => performance.now(),
        refused,
        lessons: new PlanLessons(),
        budget: { ms: DEFAULTS.transactionBudgetMs, bytes: DEFAULTS.transactionBudgetBytes },
      },
      (m) => decodeForBatch(m, 'json', codec),
    );
    for (const [id, s] of plan.overlay)
      if (s === null) committed.delete(id);
      else committed.set(id, s, plan.stamps.get(id));
    plan.refused?.commit();
    if (count)
      for (const [topic, messages] of plan.sends)
        for (const m of messages) count.set(topic, (count.get(topic) ?? 0) + estimatedBytes(m));
    left = left.slice(plan.taken);
    transactions++;
  }
  return transactions;
}

async function measure(s: Shape) {
  const committed = new SessionStates();
  const refused = new RefusedFilter();
  await run(
    s.setup.map((e, i) => raw(e.sessionId, JSON.stringify(e), i)),
    committed,
    refused,
  );
  const made = Array.from({ length: o.records }, (_, i) => s.attack(i));
  const attack = made.map((r, i) => raw(r.key, r.value, s.setup.length + i));
  const inputBytes = attack.reduce((n, m) => n + estimatedBytes({ key: m.key, value: m.value }), 0);
  // The same events as Avro records (the registry's 5-byte header, then the body): they decode
  // to the same events, so they make the same outputs, from fewer input bytes.
  const avroBytes = made.every((r) => r.event !== undefined)
    ? made.reduce(
        (n, r) =>
          n +
          estimatedBytes({ key: r.key, value: Buffer.concat([header, encodeEventAvro(r.event!)]) }),
        0,
      )
    : null;
  const byTopic = new Map<string, number>();
  const started = performance.now();
  const transactions = await run(attack, committed, refused, byTopic);
  const ms = performance.now() - started;
  const outputBytes = [...byTopic.values()].reduce((n, x) => n + x, 0);
  const short = (topic: string) =>
    ({
      [DEFAULTS.verdictTopic]: 'verdicts',
      [DEFAULTS.spillTopic]: 'spills',
      [DEFAULTS.auditTopic]: 'audit',
      [DEFAULTS.dlqTopic]: 'dlq',
      [DEFAULTS.changelogTopic]: 'changelog',
    })[topic] ?? topic;
  return {
    shape: s.name,
    what: s.what,
    records: o.records,
    inputBytesPerRecord: Math.round(inputBytes / o.records),
    outputBytesPerRecord: Math.round(outputBytes / o.records),
    amplification: Math.round((outputBytes / inputBytes) * 10) / 10,
    avroInputBytesPerRecord: avroBytes === null ? null : Math.round(avroBytes / o.records),
    avroAmplification: avroBytes === null ? null : Math.round((outputBytes / avroBytes) * 10) / 10,
    byTopic: Object.fromEntries(
      [...byTopic].map(([t, n]) => [short(t), Math.round(n / o.records)]),
    ),
    transactions,
    planMsPerRecord: Math.round((ms / o.records) * 1000) / 1000,
  };
}

async function main(): Promise<void> {
  const results: Awaited<ReturnType<typeof measure>>[] = [];
  for (const s of shapes()) results.push(await measure(s));
  const worst = (r: (typeof results)[number]) =>
    Math.max(r.amplification, r.avroAmplification ?? 0);
  results.sort((a, b) => worst(b) - worst(a));
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    load1: Math.round(os.loadavg()[0]! * 100) / 100,
    budget: { ms: DEFAULTS.transactionBudgetMs, bytes: DEFAULTS.transactionBudgetBytes },
  };
  if (json) {
    process.stdout.write(JSON.stringify({ ...meta, results }, null, 2) + '\n');
    return;
  }
  process.stdout.write(`${JSON.stringify(meta)}\n\n`);
  process.stdout.write(
    '| shape | JSON input B/record | output B/record | output ÷ input | Avro input B/record | output ÷ Avro input | by topic (B/record) | transactions |\n|---|---:|---:|---:|---:|---:|---|---:|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.shape} | ${r.inputBytesPerRecord} | ${r.outputBytesPerRecord} | ${r.amplification} | ${r.avroInputBytesPerRecord ?? '–'} | ${r.avroAmplification ?? '–'} | ${Object.entries(
        r.byTopic,
      )
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')} | ${r.transactions} |\n`,
    );
  process.stdout.write('\n');
  for (const r of results) process.stdout.write(`- ${r.shape}: ${r.what}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
