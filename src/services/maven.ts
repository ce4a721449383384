import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runCommand, seconds } from './processes';
import { serviceSettings } from '../config/config';
import { Serial } from '../serial';
import { SERVICE_SETTINGS } from '../config/settings';

/**
 * Versions of the local JVM services (src/config/settings.ts); both can be overridden by env
 * (CG_KAFKA_VERSION, CG_REGISTRY_VERSION) for a one-off try. Kafka 4.4.0 is the newest 4.x on
 * Maven Central here, and kafkajs 2.2.4 works against it (test/integration/services.test.ts
 * proves the transactional path). Apicurio 3.3.3 is the newest 3.x; it needs Java 21+.
 */
export const DEFAULT_KAFKA_VERSION = SERVICE_SETTINGS.kafkaVersion.default;
export const DEFAULT_REGISTRY_VERSION = SERVICE_SETTINGS.registryVersion.default;

/** Pinned so the goals below behave the same whatever Maven's own default plugin version is. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
/** The log4j2 <-> slf4j 1.x bridge Kafka's own distribution ships (Kafka logs through slf4j 1.7). */
const LOG4J_VERSION = '2.25.5';
const MAVEN_TIMEOUT_MS = 30 * 60_000;
const COMPLETE_MARKER = '.complete';

/** `CG_CACHE_DIR`, else `.cache/` at the repository root (git-ignored). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return serviceSettings(env).cacheDir;
}

/**
 * The Kafka broker's runtime classpath: `kafka_2.13` and its runtime dependencies plus a logging
 * binding, copied once into `<cache>/kafka-<version>/libs`. Returns that directory.
 */
export async function fetchKafkaLibs(cache: string, version: string): Promise<string> {
  const dir = join(cache, `kafka-${version}`);
  await populateOnce(dir, `Kafka ${version} broker jars`, async (tmp) => {
    writeFileSync(join(tmp, 'pom.xml'), kafkaPom(version));
    await maven(tmp, [
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${join(tmp, 'libs')}`,
    ]);
  });
  return join(dir, 'libs');
}

/**
 * Apicurio Registry's runnable distribution: Maven Central carries the Quarkus "fast-jar"
 * layout (quarkus-run.jar + lib/ + app/) as `io.apicurio:apicurio-registry-app:<v>:tar.gz:all`,
 * the same content the container image runs. Unpacked once into
 * `<cache>/apicurio-registry-<version>`; returns that directory.
 */
export async function fetchRegistryDist(cache: string, version: string): Promise<string> {
  const dir = join(cache, `apicurio-registry-${version}`);
  await populateOnce(dir, `Apicurio Registry ${version} (~160 MB)`, async (tmp) => {
    await maven(tmp, [
      `${DEPENDENCY_PLUGIN}:unpack`,
      `-Dartifact=io.apicurio:apicurio-registry-app:${version}:tar.gz:all`,
      `-DoutputDirectory=${tmp}`,
    ]);
    if (!existsSync(join(tmp, 'quarkus-run.jar'))) {
      throw new Error(`apicurio-registry-app ${version}: no quarkus-run.jar in the archive`);
    }
  });
  return dir;
}

/** Fails early, with a message that says what to install, when Maven is not on PATH. */
export function assertMavenInstalled(env: NodeJS.ProcessEnv = process.env): void {
  const found = (env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, 'mvn')));
  if (!found) {
    throw new Error(
      'Apache Maven (mvn) is not on PATH: it is needed once to fetch Kafka and ' +
        'Apicurio Registry into the cache (apt-get install maven), or set KAFKA_BROKERS and ' +
        'SCHEMA_REGISTRY_URL to use running services.',
    );
  }
}

/**
 * Fills `dir` once: builds into a private temp dir and renames it into place only when
 * complete, so an interrupted download is never mistaken for a good one, and two processes
 * racing for the same cache both end up using a whole copy.
 */
async function populateOnce(
  dir: string,
  what: string,
  fill: (tmp: string) => Promise<void>,
): Promise<void> {
  if (existsSync(join(dir, COMPLETE_MARKER))) return;
  assertMavenInstalled();
  await downloads.run(() => populate(dir, what, fill));
}

async function populate(
  dir: string,
  what: string,
  fill: (tmp: string) => Promise<void>,
): Promise<void> {
  if (existsSync(join(dir, COMPLETE_MARKER))) return; // filled while we waited our turn
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  const progress = new FetchProgress(
    what,
    `[services] first use: fetching ${what} through Maven into ${dir}`,
    tmp,
  );
  try {
    await fill(tmp);
    writeFileSync(join(tmp, COMPLETE_MARKER), new Date().toISOString() + '\n');
    if (existsSync(dir) && !existsSync(join(dir, COMPLETE_MARKER))) {
      rmSync(dir, { recursive: true, force: true }); // a leftover from an older layout
    }
    try {
      renameSync(tmp, dir);
    } catch (err) {
      if (!existsSync(join(dir, COMPLETE_MARKER))) throw err;
      rmSync(tmp, { recursive: true, force: true }); // another process won the race
    }
  } catch (err) {
    progress.end('failed');
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  progress.end(`fetched in ${seconds(started)} s`);
}

/** Maven's log of a fetch, in the fetch's temp dir (quoted when it fails: runCommand). */
const MAVEN_LOG = 'maven.log';

/**
 * One progress line for a fetch instead of Maven's block of [INFO] lines: on a terminal the line
 * is rewritten with the artifacts downloaded so far (counted in Maven's log); elsewhere it is
 * written once, and the outcome on a line of its own.
 */
class FetchProgress {
  private readonly tty = process.stderr.isTTY === true;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly what: string,
    private readonly line: string,
    private readonly dir: string,
  ) {
    process.stderr.write(this.tty ? `${line} …` : `${line}\n`);
    if (this.tty) this.timer = setInterval(() => this.show(), 500).unref();
  }

  private downloaded(): number {
    try {
      const log = readFileSync(join(this.dir, MAVEN_LOG), 'utf8');
      return log.split('\nDownloaded from ').length - 1;
    } catch {
      return 0; // Maven has not written its log yet
    }
  }

  private show(): void {
    process.stderr.write(`\r${this.line} … ${this.downloaded()} artifacts`);
  }

  end(outcome: string): void {
    clearInterval(this.timer);
    process.stderr.write(
      this.tty ? `\r${this.line}: ${outcome}\x1b[K\n` : `[services] ${this.what}: ${outcome}\n`,
    );
  }
}

/** Batch mode, output to a log in `cwd` (the fetch's temp dir): quoted by runCommand on failure. */
async function maven(cwd: string, args: string[]): Promise<void> {
  await runCommand({
    command: 'mvn',
    args: ['-B', ...args],
    cwd,
    output: { logFile: join(cwd, MAVEN_LOG) },
    timeoutMs: MAVEN_TIMEOUT_MS,
  });
}

/**
 * One download at a time: Kafka and the registry are fetched by callers running in parallel,
 * and two Mavens filling an empty ~/.m2 at once can trip over each other's half-written files.
 */
const downloads = new Serial();

function kafkaPom(version: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by src/services/maven.ts: the runtime classpath of a Kafka ${version} broker. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.compaction-guard</groupId>
  <artifactId>kafka-broker-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <!-- The broker (kafka.Kafka) and kafka.tools.StorageTool; pulls server, raft, coordinators. -->
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>${version}</version>
    </dependency>
    <!-- Kafka logs through slf4j 1.7 and brings log4j-core; this binds the two, as in its tarball. -->
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;
}
