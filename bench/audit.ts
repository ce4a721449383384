/**
 * `audit` throughput on a large generated stream, two engine paths in the same run
 * (docs/decisions.md 64): the real `runAudit` (file read, line split, JSON decode, engine,
 * report or JSON lines) with its sessions
 *   owned-fleet       OwnedFleet: in place, ordinary turns on the TurnArena's typed arrays
 *   in-place          SessionsInPlace: a Map of owned states, each event through evolveInPlace
 *                     (the processor's step)
 * Rounds alternate the two (A B, then B A, ...), after one warm-up round of each; both must
 * write the same bytes. Figures per CPU-second of the process and per wall-clock second.
 *
 *   node --expose-gc --import tsx bench/audit.ts [--events N] [--sessions N] [--rounds N] [--json-lines] [--quick]
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { Replay, SessionsInPlace, type ReplayFleet } from '../src/audit/replay';
import { runAudit } from '../src/cli/audit';
import { engineOptions } from '../src/engine/fleet';
import { generateFleetPacked } from './packed';
import { OwnedFleet } from './arena/ownedFleet';

interface Options {
  events: number;
  sessions: number;
  rounds: number;
  seed: number;
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const jsonLines = argv.includes('--json-lines');
const options: Options = quick
  ? { events: 20_000, sessions: 200, rounds: 1, seed: 20261202 }
  : { events: 1_000_000, sessions: 10_000, rounds: 5, seed: 20261202 };
for (let i = 0; i < argv.length; i++) {
  const k = argv[i]!;
  if (k === '--quick' || k === '--json-lines') continue;
  const key = {
    '--events': 'events',
    '--sessions': 'sessions',
    '--rounds': 'rounds',
    '--seed': 'seed',
  }[k] as keyof Options | undefined;
  if (key === undefined) throw new Error(`unknown argument ${k}`);
  options[key] = Number(argv[++i]);
}

const VARIANTS: Record<string, () => ReplayFleet> = {
  'owned-fleet': () => new OwnedFleet(engineOptions()),
  'in-place': () => new SessionsInPlace(engineOptions()),
};

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

class HashingSink extends Writable {
  private readonly hash = createHash('sha1');
  bytes = 0;
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += b.length;
    this.hash.update(b);
    done();
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

async function writeStream(file: string): Promise<number> {
  const { packed } = generateFleetPacked({
    sessions: options.sessions,
    events: options.events,
    seed: options.seed,
    faultyShare: 0.1,
  });
  const out = createWriteStream(file);
  let bytes = 0;
  let chunk: string[] = [];
  for (const e of packed) {
    chunk.push(JSON.stringify(e));
    if (chunk.length === 4096) {
      const text = chunk.join('\n') + '\n';
      bytes += text.length;
      if (!out.write(text)) await once(out, 'drain');
      chunk = [];
    }
  }
  if (chunk.length > 0) {
    const text = chunk.join('\n') + '\n';
    bytes += text.length;
    out.write(text);
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

interface Run {
  cpuMs: number;
  wallMs: number;
  digest: string;
}

async function run(file: string, variant: string): Promise<Run> {
  gc();
  const sink = new HashingSink();
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await runAudit(
    [{ name: file, stream: createReadStream(file, { highWaterMark: 1 << 20 }) }],
    sink,
    { json: jsonLines },
    new Replay(VARIANTS[variant]!()),
  );
  const wallMs = performance.now() - w0;
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, wallMs, digest: sink.digest() };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};

async function main(): Promise<void> {
  const file = path.join(os.tmpdir(), `cg-bench-audit-${process.pid}.jsonl`);
  try {
    const bytes = await writeStream(file);
    const names = Object.keys(VARIANTS);
    const runs: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
    const digests = new Set<string>();
    process.stderr.write(
      `${options.events} events, ${options.sessions} sessions, ${(bytes / 1e6).toFixed(0)} MB of JSON lines; ` +
        `${jsonLines ? '--json' : 'report'} output; load ${os.loadavg()[0]!.toFixed(1)}\n`,
    );
    for (let round = 0; round <= options.rounds; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const n of order) {
        const r = await run(file, n);
        digests.add(r.digest);
        const eps = (ms: number) => Math.round(options.events / (ms / 1000));
        process.stderr.write(
          `${round === 0 ? 'warm-up' : `round ${round}`} ${n}: ${eps(r.cpuMs)} events/CPU-s, ${eps(r.wallMs)} events/s wall\n`,
        );
        if (round > 0) runs[n]!.push(r);
      }
    }
    if (digests.size !== 1) throw new Error('the variants wrote different outputs');
    const result = Object.fromEntries(
      names.map((n) => {
        const cpu = runs[n]!.map((r) => options.events / (r.cpuMs / 1000));
        const wall = runs[n]!.map((r) => options.events / (r.wallMs / 1000));
        return [
          n,
          {
            cpuEventsPerSecond: Math.round(median(cpu)),
            cpuMin: Math.round(Math.min(...cpu)),
            cpuMax: Math.round(Math.max(...cpu)),
            wallEventsPerSecond: Math.round(median(wall)),
          },
        ];
      }),
    );
    const ratio =
      median(runs['in-place']!.map((r) => r.cpuMs)) /
      median(runs['owned-fleet']!.map((r) => r.cpuMs));
    console.log(
      JSON.stringify(
        {
          options: { ...options, jsonLines },
          inputBytes: bytes,
          load: os.loadavg()[0],
          result,
          inPlaceCpuOverOwnedFleetCpu: Number(ratio.toFixed(3)),
        },
        null,
        2,
      ),
    );
  } finally {
    rmSync(file, { force: true });
  }
}

void main();
