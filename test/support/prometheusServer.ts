/** A real Prometheus (Debian package `prometheus`) scraping given targets every second, temporary storage. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

export const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

export interface QueryResult {
  status: string;
  data?: {
    resultType: string;
    result: { metric: Record<string, string>; value: [number, string] }[];
  };
  error?: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

export interface PrometheusServer {
  api: string;
  query(expr: string): Promise<QueryResult>;
  log(): string;
  stop(): Promise<void>;
}

export async function startPrometheus(
  job: string,
  targets: string[],
  ruleFiles: string[] = [],
): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-prometheus-'));
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: [{ job_name: job, static_configs: [{ targets }] }],
    }),
  );
  let log = '';
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-4000)));
  const api = `http://127.0.0.1:${port}/api/v1`;
  return {
    api,
    async query(expr) {
      const res = await fetch(`${api}/query?${new URLSearchParams({ query: expr })}`);
      return (await res.json()) as QueryResult;
    },
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
