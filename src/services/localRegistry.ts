import { join } from 'node:path';
import { findJava } from './java';
import { fetchRegistryDist } from './maven';
import { freePorts, LOOPBACK } from './ports';
import { makeTempDir, removeTempDir, seconds, startProcess, waitUntil } from './processes';

/** The Confluent-compatible API of Apicurio Registry 3.x, relative to its HTTP root. */
export const CCOMPAT_PATH = '/apis/ccompat/v7';

export interface LocalRegistryOptions {
  cacheDir: string;
  version: string;
  startTimeoutMs: number;
}

export interface LocalRegistry {
  /** Base URL for Confluent clients, e.g. http://127.0.0.1:PORT/apis/ccompat/v7 */
  url: string;
  logFile: string;
  stop(): Promise<void>;
}

/** Apicurio Registry with in-memory storage: every start is a fresh, empty registry. */
export async function startLocalRegistry(opts: LocalRegistryOptions): Promise<LocalRegistry> {
  const dist = await fetchRegistryDist(opts.cacheDir, opts.version);
  const { java } = findJava(21); // Apicurio 3.3 classes are compiled for Java 21
  const [port, managementPort] = (await freePorts(2)) as [number, number];
  const logFile = join(opts.cacheDir, 'logs', `registry-${port}.log`);
  // Quarkus may write scratch files relative to its working dir; keep them out of the cache.
  const workDir = makeTempDir('cg-registry-');
  const started = Date.now();
  process.stderr.write(
    `[services] starting Apicurio Registry ${opts.version} on ` +
      `${LOOPBACK}:${port}, log ${logFile}\n`,
  );
  const registry = startProcess({
    name: 'apicurio-registry',
    command: java,
    args: [
      '-Xms64m',
      // The suite registers a few hundred subjects in one in-memory H2 database: with half this
      // heap the registry stopped answering for ~20 s at a time. Even with this much it held one
      // call past the clients' registry timeout (REGISTRY_TIMEOUT_MS, 15 s) in a CI run, once,
      // whereas 10,000 subjects registered by hand stay at a 33 MB live heap and a 0.3 s
      // slowest call: the stalls are not (only) the heap, so every registration goes through
      // registerSchemas, which tries again (test/integration/registry-stall.test.ts).
      '-Xmx1024m',
      `-Dquarkus.http.host=${LOOPBACK}`,
      `-Dquarkus.http.port=${port}`,
      // The health/metrics interface would otherwise take 0.0.0.0:9000, shared by every copy.
      `-Dquarkus.management.host=${LOOPBACK}`,
      `-Dquarkus.management.port=${managementPort}`,
      // Also the defaults: SQL storage on an in-memory H2 database (jdbc:h2:mem:...).
      '-Dapicurio.storage.kind=sql',
      '-Dapicurio.storage.sql.kind=h2',
      '-jar',
      join(dist, 'quarkus-run.jar'),
    ],
    cwd: workDir,
    logFile,
  });
  const url = `http://${LOOPBACK}:${port}${CCOMPAT_PATH}`;
  const stop = async (): Promise<void> => {
    await registry.stop();
    removeTempDir(workDir);
  };
  try {
    await waitUntil(() => answersSubjects(url), {
      timeoutMs: opts.startTimeoutMs,
      intervalMs: 500,
      what: `the registry to answer GET ${url}/subjects`,
      process: registry,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  process.stderr.write(`[services] Apicurio Registry ready in ${seconds(started)} s\n`);
  return { url, logFile, stop };
}

/** Ready = the ccompat API itself answers, not just the HTTP server. */
export async function answersSubjects(registryUrl: string): Promise<boolean> {
  const response = await fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(2_000) });
  await response.body?.cancel();
  return response.status === 200;
}
