/**
 * `npm run fuzz`: the fuzz target (pipeline.ts) on generated hostile cases (shapes.ts) for a
 * given time, after replaying the corpus (test/fuzz/corpus/). Exits 1 on a finding (a crash, a
 * record over a second or still running after the watchdog's limit, an output over 64 KiB, a
 * bound the decoder let through, a range set over 128 ranges), after writing the failing case
 * into the corpus directory as found-<hash>.json: fixed, it stays there as a regression test.
 *
 *   npm run fuzz                         # 60 s (or FUZZ_SECONDS), a random seed (or FUZZ_SEED)
 *   npm run fuzz -- --seconds 600 --seed 42 --out /tmp/findings
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Command, InvalidArgumentError } from 'commander';
import { CORPUS_DIR, writeFinding } from './corpus';
import type { Finding, FuzzCase } from './pipeline';
import { newShared, readCase, type Tally, type WorkerMessage } from './shared';

/** A record still running after this long is stopped and kept as a hang. */
const WATCHDOG_MS = 10_000;

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
}

const program = new Command('fuzz')
  .description('Fuzz the bytes → decode → engine → outputs path; exit 1 on any finding.')
  .option(
    '--seconds <n>',
    'how long to fuzz, after the corpus replay',
    positive,
    Number(process.env.FUZZ_SECONDS ?? 60),
  )
  .option(
    '--seed <n>',
    'fast-check seed (default: FUZZ_SEED, else random)',
    positive,
    process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined,
  )
  .option('--out <dir>', 'where a failing case is written', CORPUS_DIR)
  .parse();
const opts = program.opts<{ seconds: number; seed?: number; out: string }>();
const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);

function describe(e: Finding | string): string {
  return typeof e === 'string' ? e : `${e.kind} at record ${e.record} (${e.stage}): ${e.message}`;
}

function preview(c: FuzzCase, index: number): string {
  const r = c.records[index];
  if (!r) return '';
  const show = (b: Buffer | null) =>
    b === null
      ? 'null'
      : `${b.length} bytes: ${JSON.stringify(b.subarray(0, 160).toString('utf8'))}`;
  return `  key ${show(r.key)}\n  value ${show(r.value)}`;
}

function printTally(t: Tally, seconds: number, records: number, cases: number): void {
  const rate = (n: number) => Math.round(n / seconds).toLocaleString('en-US');
  console.log(
    `fuzz: ${cases.toLocaleString('en-US')} cases, ${records.toLocaleString('en-US')} records in ${seconds.toFixed(0)} s: ${rate(cases)} cases/s, ${rate(records)} records/s`,
  );
  const list = (o: Record<string, number>) =>
    Object.entries(o)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  console.log(`  dead letters: ${list(t.deadLetters) || 'none'}`);
  console.log(
    `  verdicts: ${list(t.verdicts) || 'none'}; audit records: ${list(t.audits) || 'none'}`,
  );
  console.log(`  outputs: ${t.outputs}; largest record written: ${t.largestBytes} bytes`);
}

const shared = newShared();
const worker = new Worker(path.join(__dirname, 'worker.ts'), {
  workerData: { seconds: opts.seconds, seed, ...shared },
});
const counters = new Float64Array(shared.counters);
const started = Date.now();
let fuzzStarted = started;
let exitCode = 1;

console.log(
  `fuzz: seed ${seed}, ${opts.seconds} s after the corpus replay (FUZZ_SEED=${seed} repeats it)`,
);

function keep(c: FuzzCase, about: string): void {
  console.log(`  kept as ${path.relative(process.cwd(), writeFinding(c, about, opts.out))}`);
}

const watchdog = setInterval(() => {
  const since = counters[3]!;
  if (since === 0 || Date.now() - since < WATCHDOG_MS) return;
  const index = counters[2]!;
  console.error(`fuzz: HANG: record ${index} still running after ${WATCHDOG_MS / 1000} s`);
  const c = readCase({ counters, bytes: new Uint8Array(shared.bytes) });
  if (c) {
    console.error(preview(c, index));
    keep(c, `hang: record ${index} did not return within ${WATCHDOG_MS / 1000} s (seed ${seed})`);
  }
  exitCode = 1;
  void worker.terminate();
}, 200);

const progress = setInterval(() => {
  const s = (Date.now() - fuzzStarted) / 1000;
  console.log(`  ${s.toFixed(0)} s: ${counters[1]} cases, ${counters[0]} records`);
}, 15_000);

worker.on('message', (m: WorkerMessage) => {
  switch (m.kind) {
    case 'corpus-failed':
      console.error(`fuzz: corpus case ${m.name} fails: ${describe(m.error)}`);
      exitCode = 1;
      break;
    case 'corpus-passed':
      console.log(
        `fuzz: corpus replayed (${counters[1]} cases, ${counters[0]} records) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      fuzzStarted = Date.now();
      counters[0] = 0;
      counters[1] = 0;
      break;
    case 'flaky':
      console.log(
        `fuzz: a record over the time limit was fast on replay (machine load?), going on: ${describe(m.error)}`,
      );
      break;
    case 'found': {
      // Buffers arrive as plain Uint8Arrays (structured clone).
      const asBuffer = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b));
      m.found.records = m.found.records.map((r) => ({
        key: asBuffer(r.key),
        value: asBuffer(r.value),
      }));
      console.error(`fuzz: FOUND ${describe(m.error)} (replayed: ${m.replayed})`);
      console.error(
        `  seed ${m.seed}, path ${m.path}, ${m.found.records.length} records, ring ${m.found.ring}`,
      );
      const index = typeof m.error === 'string' ? 0 : m.error.record;
      console.error(preview(m.found, index));
      keep(m.found, `found by the fuzzer (seed ${m.seed}): ${describe(m.error)}`);
      exitCode = 1;
      break;
    }
    case 'done':
      printTally(m.tally, (Date.now() - fuzzStarted) / 1000, counters[0]!, counters[1]!);
      exitCode = 0;
      break;
  }
});
worker.on('error', (e) => {
  console.error(`fuzz: the worker failed: ${e.stack ?? e.message}`);
  exitCode = 1;
});
worker.on('exit', () => {
  clearInterval(watchdog);
  clearInterval(progress);
  process.exitCode = exitCode;
});
