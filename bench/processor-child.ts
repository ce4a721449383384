/**
 * The real processor (startProcessor) in a child process of a benchmark: config as JSON in
 * env CG_BENCH_CONFIG; prints `READY <http port> <epoch ms>` once the group is joined and state
 * restored (the time: when that happened); stops on SIGTERM.
 */
import pino from 'pino';
import type { Config } from '../src/config/config';
import { startProcessor } from '../src/cli/run';
import { sleep } from '../src/time';

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CG_BENCH_CONFIG ?? '{}') as Config;
  // CG_BENCH_LOG_FILE: the child's log to a file (stdout carries READY to the bench).
  const file = process.env.CG_BENCH_LOG_FILE;
  const log = pino(
    { level: process.env.CG_BENCH_LOG ?? 'warn' },
    file ? pino.destination({ dest: file, sync: false }) : undefined,
  );
  // The moment readiness turns true, taken in the processor's own call: the first batches are
  // processed right after it, synchronously, so a poll of isReady() could see it only once
  // they are done (one 8 MiB batch per partition holds a whole 200k-event benchmark input).
  let readyAt: number | null = null;
  const observer = {
    readiness(ready: boolean) {
      if (ready && readyAt === null) readyAt = Date.now();
    },
  };
  const running = await startProcessor(config, log, { observer });
  while (readyAt === null) await sleep(20);
  process.stdout.write(`READY ${running.httpPort} ${readyAt}\n`);
  const stop = () => {
    void running.stop().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
