import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { provideServices, type Services } from './index';
import { serviceSettings } from '../config/config';

/** What the endpoints file holds; readers set KAFKA_BROKERS / SCHEMA_REGISTRY_URL from it. */
export interface EndpointsFile {
  brokers: string[];
  registryUrl: string;
  mode: Services['mode'];
  /** This process: send it SIGTERM to stop the services. */
  pid: number;
}

/**
 * Starts the services once and keeps them up until SIGTERM/SIGINT, so a CI script can start
 * them in the background and several test runs (via env) can share them:
 *
 *   node dist/services/standalone.js [endpoints.json]   # default: CG_SERVICES_FILE or .cache/services.json
 *
 * The file appears (atomically) only once both services answer, and is removed on shutdown.
 * stdout gets one line of shell assignments with the same endpoints.
 */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const settings = serviceSettings();
  const file = resolve(
    argv[0] ?? settings.servicesFile ?? join(settings.cacheDir, 'services.json'),
  );
  const services = await provideServices();
  // Signal handlers first: from here on the services must be stopped however we end.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`[services] ${signal}: stopping\n`);
    rmSync(file, { force: true });
    services.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`[services] stop failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, shutdown);
  // External endpoints start no child process, and nothing else would keep Node running.
  setInterval(() => undefined, 60_000);

  const { brokers, registryUrl, mode } = services;
  const endpoints: EndpointsFile = { brokers, registryUrl, mode, pid: process.pid };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(endpoints, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
  process.stdout.write(
    `KAFKA_BROKERS=${services.brokers.join(',')} SCHEMA_REGISTRY_URL=${services.registryUrl}\n`,
  );
  process.stderr.write(`[services] ${services.mode} services up; endpoints in ${file}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(
      `[services] failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
    process.exit(1);
  });
}
