/**
 * Decoding microbenchmark: CPU µs per input event for the decoders the processor runs
 * per record, on the same fleet events the e2e benchmark produces (src/sim), in a tight loop
 * with no Kafka:
 *
 *   JSON.parse            the JSON line alone (the floor any JSON decoder pays)
 *   decodeEventLine       JSON.parse + schema validation + defaults + semantic rules (src/schema)
 *   decodeRecord json     what the processor runs per JSON record: UTF-8 check, decodeEventLine,
 *                         key = sessionId (src/kafka/records.ts `decodeRecordNow`, as
 *                         src/kafka/batch/decoder.ts `decodeForBatch` calls it)
 *   decodeEventAvro       an Avro body through a resolver from the writer's schema, as the
 *                         processor decodes a registry schema id (src/registry/codec.ts)
 *
 * Each run times one pass of every variant over all events (variants interleaved, so load drift
 * on a shared machine hits them alike); the first run is a warm-up and left out of the medians.
 *
 *   npm run bench:decode                        # 100k events, 2,000 sessions, 7 runs
 *   npm run bench:decode -- --events 50000 --runs 5 --json
 */
import type { ContextEvent } from '../src/engine/events';
import { decodeRecord, decodeRecordNow } from '../src/kafka/records';
import type { RegistryCodec } from '../src/registry/codec';
import { decodeEventAvro, decodeEventLine, encodeEventAvro } from '../src/schema/decodeEvent';
import { parseEventSchema, rawSchemas } from '../src/schema/schemas';
import { generateFleetArray } from '../src/sim';
import { parseBenchArgs } from './args';

export interface DecodeBenchOptions {
  events: number;
  sessions: number;
  seed: number;
  /** Timed passes; the first is a warm-up, left out of the medians. */
  runs: number;
}

export const DEFAULTS: DecodeBenchOptions = {
  events: 100_000,
  sessions: 2_000,
  seed: 20_261_202,
  runs: 7,
};

export const QUICK: DecodeBenchOptions = {
  events: 5_000,
  sessions: 100,
  seed: 20_261_202,
  runs: 2,
};

export const VARIANTS = [
  'JSON.parse',
  'decodeEventLine',
  'decodeRecord json',
  'decodeEventAvro',
] as const;
export type Variant = (typeof VARIANTS)[number];

export interface VariantResult {
  /** CPU µs per event (user + system of this process), one per timed run. */
  cpuUsPerEvent: number[];
  median: number;
  min: number;
  max: number;
  /** Events the variant accepted in the last run (all of them, for a correct decoder). */
  accepted: number;
}

export interface DecodeBenchResult {
  options: DecodeBenchOptions;
  bytesPerEventJson: number;
  bytesPerEventAvro: number;
  variants: Record<Variant, VariantResult>;
  node: string;
}

interface Inputs {
  lines: string[];
  records: { key: Buffer; value: Buffer; offset: string }[];
  avro: Buffer[];
}

/** The JSON record path never touches the codec (format json); it only needs to exist. */
const NO_CODEC = {} as RegistryCodec;

/** The writer schema as the processor gets it from the registry: ours, but another Type. */
const writerType = parseEventSchema(rawSchemas.contextChangeEvent).union;

async function pass(variant: Variant, inputs: Inputs): Promise<number> {
  let accepted = 0;
  switch (variant) {
    case 'JSON.parse':
      for (const line of inputs.lines) {
        if ((JSON.parse(line) as ContextEvent).eventId !== '') accepted++;
      }
      break;
    case 'decodeEventLine':
      for (const line of inputs.lines) if (decodeEventLine(line).ok) accepted++;
      break;
    case 'decodeRecord json':
      // As decodeForBatch (src/kafka/batch/decoder.ts): no promise for a record that needs no registry.
      for (const r of inputs.records) {
        const decoded = decodeRecordNow(r, 'json') ?? (await decodeRecord(r, 'json', NO_CODEC));
        if (decoded.ok) accepted++;
      }
      break;
    case 'decodeEventAvro':
      for (const body of inputs.avro) if (decodeEventAvro(body, writerType).ok) accepted++;
      break;
  }
  return accepted;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

export async function runDecodeBench(
  options: DecodeBenchOptions,
  progress: (line: string) => void = () => undefined,
): Promise<DecodeBenchResult> {
  const { events } = generateFleetArray({
    sessions: options.sessions,
    events: options.events,
    seed: options.seed,
    faultyShare: 0.1,
  });
  const lines = events.map((e) => JSON.stringify(e));
  const inputs: Inputs = {
    lines,
    records: events.map((e, i) => ({
      key: Buffer.from(e.sessionId),
      value: Buffer.from(lines[i]!),
      offset: String(i),
    })),
    avro: events.map((e) => encodeEventAvro(e)),
  };
  const n = events.length;
  const times = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<
    Variant,
    number[]
  >;
  const accepted = Object.fromEntries(VARIANTS.map((v) => [v, 0])) as Record<Variant, number>;
  for (let run = 0; run < options.runs; run++) {
    const line: string[] = [];
    for (const v of VARIANTS) {
      const t0 = cpuMicros();
      accepted[v] = await pass(v, inputs);
      const us = (cpuMicros() - t0) / n;
      if (run > 0 || options.runs === 1) times[v].push(us);
      line.push(`${v} ${us.toFixed(2)}`);
    }
    const warmUp = run === 0 && options.runs > 1 ? ' (warm-up)' : '';
    progress(`run ${run + 1}/${options.runs}${warmUp}: ${line.join(', ')} µs/event`);
  }
  const variants = Object.fromEntries(
    VARIANTS.map((v) => {
      const xs = times[v];
      return [
        v,
        {
          cpuUsPerEvent: xs,
          median: median(xs),
          min: Math.min(...xs),
          max: Math.max(...xs),
          accepted: accepted[v],
        },
      ];
    }),
  ) as Record<Variant, VariantResult>;
  return {
    options,
    bytesPerEventJson: lines.reduce((s, l) => s + l.length, 0) / n,
    bytesPerEventAvro: inputs.avro.reduce((s, b) => s + b.length, 0) / n,
    variants,
    node: process.version,
  };
}

export function formatReport(r: DecodeBenchResult): string {
  const base = r.variants['JSON.parse'].median;
  const rows = VARIANTS.map((v) => {
    const x = r.variants[v];
    return `| ${v} | ${x.median.toFixed(2)} | ${x.min.toFixed(2)} | ${x.max.toFixed(2)} | ${(x.median / base).toFixed(2)} | ${x.accepted} |`;
  });
  return [
    `${r.options.events} events, ${r.options.sessions} sessions, seed ${r.options.seed}; ` +
      `JSON ${r.bytesPerEventJson.toFixed(0)} B/event, Avro ${r.bytesPerEventAvro.toFixed(0)} B/event; ` +
      `${r.options.runs} runs (first a warm-up); Node ${r.node}`,
    '',
    '| decoder | CPU µs/event (median) | min | max | ÷ JSON.parse | accepted |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

function parseArgs(argv: readonly string[]): { options: DecodeBenchOptions; json: boolean } {
  return parseBenchArgs(
    argv,
    { full: DEFAULTS, quick: QUICK },
    { '--events': 'events', '--sessions': 'sessions', '--seed': 'seed', '--runs': 'runs' },
    (n) => Number.isFinite(n) && n > 0,
  );
}

if (require.main === module) {
  const { options, json } = parseArgs(process.argv.slice(2));
  runDecodeBench(options, (line) => process.stderr.write(`${line}\n`)).then(
    (result) =>
      process.stdout.write(
        json ? `${JSON.stringify(result, null, 2)}\n` : `${formatReport(result)}\n`,
      ),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
