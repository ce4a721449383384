/**
 * murmur2 of one key, ours (src/kafka/murmur2.ts, 32-bit arithmetic) against kafkajs 2.2.4's
 * (a BigInt `Long` never truncated: quadratic in the key), by key size. Each size is hashed by
 * both in the same round, rounds alternating, median of the rounds (the first is a warm-up and
 * left out); kafkajs only up to `--kafkajs-max` bytes (its time grows with the square of the
 * size). Both must give the same hash: the run stops if they differ.
 *
 *   node --import tsx bench/murmur2.ts                       # 1 KiB .. 1 MiB, kafkajs to 128 KiB
 *   node --import tsx bench/murmur2.ts --kafkajs-max 262144 --runs 3 --json
 */
import { createRequire } from 'node:module';
import { murmur2 } from '../src/kafka/murmur2';
import { parseBenchArgs } from './args';

const kafkajsMurmur2 = createRequire(__filename)(
  'kafkajs/src/producer/partitioners/default/murmur2',
) as (key: Buffer) => number;

interface Options {
  /** Timed rounds; the first is a warm-up. */
  runs: number;
  /** The largest key kafkajs' murmur2 is timed on, in bytes. */
  kafkajsMax: number;
  /** The largest key, in bytes (sizes double from 1 KiB). */
  max: number;
}

const FULL: Options = { runs: 5, kafkajsMax: 128 * 1024, max: 1024 * 1024 };
const QUICK: Options = { runs: 3, kafkajsMax: 16 * 1024, max: 64 * 1024 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(f: () => number): { ms: number; hash: number } {
  const t0 = performance.now();
  const hash = f();
  return { ms: performance.now() - t0, hash };
}

function main(): void {
  const { options, json } = parseBenchArgs(
    process.argv.slice(2),
    { full: FULL, quick: QUICK },
    { '--runs': 'runs', '--kafkajs-max': 'kafkajsMax', '--max': 'max' },
    (v) => Number.isSafeInteger(v) && v > 0,
  );
  const sizes: number[] = [];
  for (let n = 1024; n <= options.max; n *= 2) sizes.push(n);
  const rows = sizes.map((bytes) => {
    const key = Buffer.alloc(bytes);
    for (let i = 0; i < bytes; i++) key[i] = (i * 31 + 7) & 0xff;
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      const a = timed(() => murmur2(key));
      if (run > 0) ours.push(a.ms);
      if (bytes <= options.kafkajsMax) {
        const b = timed(() => kafkajsMurmur2(key));
        if (b.hash !== a.hash) throw new Error(`${bytes} B: kafkajs ${b.hash}, ours ${a.hash}`);
        if (run > 0) theirs.push(b.ms);
      }
    }
    return {
      bytes,
      oursMs: median(ours),
      kafkajsMs: theirs.length > 0 ? median(theirs) : null,
    };
  });
  if (json) {
    console.log(JSON.stringify({ options, rows }));
    return;
  }
  console.log('key bytes | ours ms | kafkajs 2.2.4 ms');
  for (const r of rows)
    console.log(
      `${String(r.bytes).padStart(9)} | ${r.oursMs.toFixed(3).padStart(7)} | ${r.kafkajsMs === null ? '-' : r.kafkajsMs.toFixed(1)}`,
    );
}

main();
