/**
 * `audit` on long lines and on many short ones (docs/decisions.md 156), before and after, in the
 * same run: the `runAudit` of this checkout against the one of an earlier commit (`--before
 * REF`, required; d583018 is the commit before decision 156), whose src/ is extracted
 * with `git archive` into bench/results/before-REF/ (ignored by git; removed at the end) and
 * imported from there.
 *
 * Inputs, each written to a temporary file and read through a file stream as the CLI reads it:
 *   line-5mb, line-10mb, line-20mb   one JSON line of that size (a CompactionRequested whose
 *                                    `reason` is the bulk; above Kafka's max.message.bytes)
 *   short-10mb                       10 MB of short CompactionRequested lines against one session
 *                                    that refuses each (the seed incident's request, repeated)
 * Each run is a fresh process (`--child`). Output: `--json` records into a counting sink. Per input and side: wall seconds, seconds per
 * MB, output bytes per input byte (medians over the rounds, every round's seconds too); then
 * before ÷ after.
 *
 * `--limit N` gives the after side `--max-message-bytes N`: above the lines' size, it decodes
 * them whole as the before side does (the split and the decoders compared alone).
 *
 *   node --import tsx bench/audit-lines.ts --before REF [--rounds N] [--sizes 5,10,20] [--limit N]
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import type { Readable } from 'node:stream';

type RunAudit = (
  inputs: { name: string; stream: Readable }[],
  out: Writable,
  options: { json: boolean; maxLineBytes?: number },
) => Promise<void>;

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv[i + 1];
};
const before = arg('--before');
const rounds = Number(arg('--rounds') ?? 3);
const sizes = (arg('--sizes') ?? '5,10,20').split(',').map(Number);
/** `audit --max-message-bytes`: above the lines' size, the after side decodes them whole too. */
const limit = arg('--limit');
const ROOT = path.resolve(__dirname, '..');
const MB = 1024 * 1024;

/** The earlier commit's src/, extracted once beside this checkout's node_modules. */
function extractBefore(ref: string): string {
  const sha = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', ref], { encoding: 'utf8' });
  const dir = path.join(ROOT, 'bench', 'results', `before-${sha.trim()}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['-C', ROOT, 'archive', ref, 'src', 'schemas', 'package.json']);
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  return dir;
}

function seedRequestLines(bytes: number): Buffer {
  const seed = execFileSync('cat', [path.join(ROOT, 'examples', 'seed-incident.jsonl')], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const at = seed.findIndex((e) => e.type === 'CompactionRequested');
  const lines = seed.slice(0, at).map((e) => JSON.stringify(e));
  const request = seed[at]!;
  let total = lines.reduce((n, l) => n + l.length + 1, 0);
  for (let i = 0; total < bytes; i++) {
    const l = JSON.stringify({
      ...request,
      seq: (request.seq as number) + i,
      eventId: `bench-e${i}`,
      requestId: `bench-r${i}`,
      occurredAt: (request.occurredAt as number) + i,
    });
    lines.push(l);
    total += l.length + 1;
  }
  return Buffer.from(lines.join('\n') + '\n');
}

function oneLine(bytes: number): Buffer {
  const shell = JSON.stringify({
    type: 'CompactionRequested',
    sessionId: 's',
    seq: 1,
    eventId: 'e',
    occurredAt: 1,
    requestId: 'r',
    reason: '',
  });
  return Buffer.from(
    shell.replace('"reason":""', `"reason":"${'a'.repeat(bytes - shell.length)}"`) + '\n',
  );
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

class CountingSink extends Writable {
  bytes = 0;
  override _write(chunk: Buffer, _e: BufferEncoding, done: () => void): void {
    this.bytes += chunk.length;
    done();
  }
}

/** One side on one file, in a process of its own (`--child SRC FILE`): seconds and bytes out. */
async function child(src: string, file: string, maxLineBytes?: number): Promise<void> {
  const { runAudit } = (await import(path.join(src, 'cli', 'audit.ts'))) as { runAudit: RunAudit };
  const sink = new CountingSink();
  const start = process.hrtime.bigint();
  const options = maxLineBytes === undefined ? { json: true } : { json: true, maxLineBytes };
  await runAudit([{ name: file, stream: createReadStream(file) }], sink, options);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(JSON.stringify({ seconds, out: sink.bytes }) + '\n');
}

/**
 * Each run in a fresh process, so that neither side runs on a heap or JIT state the other left
 * (in one process, the side run second was measured slower on the same code).
 */
function timed(src: string, file: string): { seconds: number; out: number } {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', __filename, '--child', src, file, ...(limit === undefined ? [] : [limit])],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  return JSON.parse(out) as { seconds: number; out: number };
}

async function main(): Promise<void> {
  if (before === undefined)
    throw new Error('--before REF is required (the commit to compare with)');
  const beforeDir = extractBefore(before!);
  const sides: Record<string, string> = {
    before: path.join(beforeDir, 'src'),
    after: path.join(ROOT, 'src'),
  };
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cg-audit-lines-'));
  const inputs: [string, Buffer][] = [
    ...sizes.map((mb): [string, Buffer] => [`line-${mb}mb`, oneLine(mb * MB)]),
    ['short-10mb', seedRequestLines(10 * MB)],
  ];
  const results: Record<string, unknown>[] = [];
  try {
    for (const [name, bytes] of inputs) {
      const file = path.join(tmp, `${name}.jsonl`);
      writeFileSync(file, bytes);
      const row: Record<string, number | string> = {
        input: name,
        mb: +(bytes.length / MB).toFixed(2),
      };
      const seconds: Record<string, number[]> = { before: [], after: [] };
      for (let r = 0; r < rounds; r++) {
        // Alternate which side goes first from round to round.
        const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
        for (const side of order) {
          const { seconds: s, out } = timed(sides[side]!, file);
          seconds[side]!.push(s);
          row[`${side}_out_per_in`] = +(out / bytes.length).toFixed(4);
        }
      }
      const b = median(seconds.before!);
      const a = median(seconds.after!);
      row.before_s = +b.toFixed(3);
      row.after_s = +a.toFixed(3);
      row.before_s_all = seconds.before!.map((x) => x.toFixed(2)).join(' ');
      row.after_s_all = seconds.after!.map((x) => x.toFixed(2)).join(' ');
      row.before_s_per_mb = +(b / (bytes.length / MB)).toFixed(4);
      row.after_s_per_mb = +(a / (bytes.length / MB)).toFixed(4);
      row.before_over_after = +(b / a).toFixed(1);
      results.push(row);
      process.stderr.write(JSON.stringify(row) + '\n');
      rmSync(file);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    // Not left for `npm run typecheck`, which reads bench/.
    rmSync(beforeDir, { recursive: true, force: true });
  }
  process.stdout.write(
    JSON.stringify(
      { before, limit: limit ?? 'default', rounds, node: process.version, results },
      null,
      2,
    ) + '\n',
  );
}

const childAt = argv.indexOf('--child');
const childLimit = argv[childAt + 3];
void (childAt >= 0
  ? child(
      argv[childAt + 1]!,
      argv[childAt + 2]!,
      childLimit === undefined ? undefined : Number(childLimit),
    )
  : main());
