/**
 * The real processor (startProcessor) in a child process of a benchmark: config as JSON in
 * env CG_BENCH_CONFIG; prints `READY <http port>` once the group is joined and state restored;
 * stops on SIGTERM.
 */
import pino from 'pino';
import type { Config } from '../src/config/config';
import { startProcessor } from '../src/cli/run';

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CG_BENCH_CONFIG ?? '{}') as Config;
  // CG_BENCH_LOG_FILE: the child's log to a file (stdout carries READY to the bench).
  const file = process.env.CG_BENCH_LOG_FILE;
  const log = pino(
    { level: process.env.CG_BENCH_LOG ?? 'warn' },
    file ? pino.destination({ dest: file, sync: false }) : undefined,
  );
  const running = await startProcessor(config, log);
  while (!running.processor.isReady()) await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`READY ${running.httpPort}\n`);
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
