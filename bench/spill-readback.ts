/**
 * What the read-back before signing costs a spill (decision 153): a FileSpillStore write alone
 * against storeVouched (join the pieces, write, read back, compare piece by piece), for one
 * spill of 2,000 turns of 2 KiB (3.9 MiB: a long, tool-heavy session), interleaved, in a temp
 * dir; the medians of 30 runs each.
 *
 *   node --import tsx bench/spill-readback.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileSpillStore } from '../src/client/spill';
import { storeVouched, turnPiece } from '../src/client/vouch';

const TURNS = 2000;
const RUNS = 30;

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const ms = (since: bigint): number => Number(process.hrtime.bigint() - since) / 1e6;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-bench-spill-'));
  try {
    const store = new FileSpillStore(dir);
    const line = `${'x'.repeat(2047)}\n`;
    const pieces = Array.from({ length: TURNS }, (_, t) =>
      turnPiece(
        {
          turn: t,
          tokens: { start: t * 500, end: t * 500 + 500 },
          messages: { start: t, end: t + 1 },
        },
        line,
      ),
    );
    const content = Buffer.from(line.repeat(TURNS));
    const range = { start: 0, end: TURNS };
    const write: number[] = [];
    const vouched: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t0 = process.hrtime.bigint();
      await store.write({ sessionId: 's', spillRequestId: `w${i}`, unit: 'TURNS', range, content });
      write.push(ms(t0));
      t0 = process.hrtime.bigint();
      await storeVouched(
        store,
        { sessionId: 's', spillRequestId: `v${i}`, unit: 'TURNS', range },
        pieces,
      );
      vouched.push(ms(t0));
    }
    const mib = (content.length / 2 ** 20).toFixed(1);
    process.stdout.write(
      `${mib} MiB, ${TURNS} turns, ${RUNS} runs: write alone median ${median(write).toFixed(1)} ms; ` +
        `storeVouched median ${median(vouched).toFixed(1)} ms\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
