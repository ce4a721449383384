import { join } from 'node:path';
import { dockerAvailable, startContainers } from './containers';
import { startLocalKafka } from './localKafka';
import { startLocalKafkaCluster } from './localCluster';
import { startLocalRegistry } from './localRegistry';
import { cacheDir, DEFAULT_KAFKA_VERSION, DEFAULT_REGISTRY_VERSION } from './maven';
import { pruneLogs } from './processes';

export type ServicesMode = 'external' | 'testcontainers' | 'local';

/** A Kafka broker and a Confluent-compatible Schema Registry, ready to use. */
export interface Services {
  /** host:port list for kafkajs `brokers`. */
  brokers: string[];
  /** Base URL for @kafkajs/confluent-schema-registry `host` (Apicurio: .../apis/ccompat/v7). */
  registryUrl: string;
  /** What was used: given endpoints, containers, or JVMs started from the Maven cache. */
  mode: ServicesMode;
  /** Stops whatever provideServices started (nothing for external endpoints); idempotent. */
  stop(): Promise<void>;
}

export interface ProvideServicesOptions {
  /** Where KAFKA_BROKERS, SCHEMA_REGISTRY_URL, CG_* are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Probe for a Docker engine (default: yes, unless env CG_DOCKER=0). */
  docker?: boolean;
  /** Per service, how long a start may take; the first start on a cold machine is slowest. */
  startTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 180_000;
const DOCKER_PROBE_TIMEOUT_MS = 5_000;
/** Each local start leaves a log per service in <cache>/logs; old ones are only clutter. */
const LOG_RETENTION_MS = 3 * 24 * 3600_000;

/**
 * Provides Kafka + registry, in this order of preference:
 * 1. endpoints given by env KAFKA_BROKERS (comma list) and SCHEMA_REGISTRY_URL: used as is;
 * 2. a reachable Docker engine: containers via testcontainers;
 * 3. otherwise local JVMs (Kafka KRaft broker, Apicurio Registry) fetched once through Maven
 *    into `.cache/` (env CG_CACHE_DIR), versions from CG_KAFKA_VERSION / CG_REGISTRY_VERSION.
 *    Env CG_KAFKA_NODES=3 starts a local 3-node cluster instead of the single broker (RF 3,
 *    min.insync.replicas 2; src/services/localCluster.ts); the default is 1.
 * When only one of the two env vars is set, that one is used and only the other is started.
 */
export async function provideServices(opts: ProvideServicesOptions = {}): Promise<Services> {
  const env = opts.env ?? process.env;
  const givenBrokers = parseBrokers(env.KAFKA_BROKERS);
  const givenRegistry = env.SCHEMA_REGISTRY_URL?.trim().replace(/\/+$/, '') || undefined;
  if (givenBrokers !== undefined && givenRegistry !== undefined) {
    return { brokers: givenBrokers, registryUrl: givenRegistry, mode: 'external', stop: noop };
  }
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const wantDocker = opts.docker ?? env.CG_DOCKER !== '0';

  if (wantDocker && (await dockerAvailable(DOCKER_PROBE_TIMEOUT_MS))) {
    // Containers come as a pair; an externally given half is still preferred.
    const started = await startContainers(startTimeoutMs);
    return once({
      brokers: givenBrokers ?? started.brokers,
      registryUrl: givenRegistry ?? started.registryUrl,
      mode: 'testcontainers',
      stop: started.stop,
    });
  }

  const cache = cacheDir(env);
  pruneLogs(join(cache, 'logs'), LOG_RETENTION_MS);
  const nodes = kafkaNodes(env);
  const version = env.CG_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION;
  const [kafka, registry] = await Promise.allSettled([
    givenBrokers === undefined
      ? nodes === 1
        ? startLocalKafka({ cacheDir: cache, version, startTimeoutMs })
        : startLocalKafkaCluster({ cacheDir: cache, version, startTimeoutMs, nodes })
      : undefined,
    givenRegistry === undefined
      ? startLocalRegistry({
          cacheDir: cache,
          version: env.CG_REGISTRY_VERSION ?? DEFAULT_REGISTRY_VERSION,
          startTimeoutMs,
        })
      : undefined,
  ]);
  const stopAll = async (): Promise<void> => {
    await Promise.all(
      [kafka, registry].map((r) => (r.status === 'fulfilled' ? r.value?.stop() : undefined)),
    );
  };
  if (kafka.status === 'rejected' || registry.status === 'rejected') {
    await stopAll();
    throw (kafka.status === 'rejected' ? kafka : (registry as PromiseRejectedResult)).reason;
  }
  const brokers = givenBrokers ?? kafka.value?.brokers;
  const registryUrl = givenRegistry ?? registry.value?.url;
  if (brokers === undefined || registryUrl === undefined) throw new Error('unreachable');
  return once({ brokers, registryUrl, mode: 'local', stop: stopAll });
}

/** CG_KAFKA_NODES: how many local Kafka nodes (1 to 5; default 1, the single broker). */
export function kafkaNodes(env: NodeJS.ProcessEnv): number {
  const raw = env.CG_KAFKA_NODES?.trim() ?? '';
  if (raw === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 5)
    throw new Error(`CG_KAFKA_NODES: expected an integer from 1 to 5, got ${JSON.stringify(raw)}`);
  return n;
}

function parseBrokers(value: string | undefined): string[] | undefined {
  const brokers = (value ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  return brokers.length > 0 ? brokers : undefined;
}

/** Makes stop() safe to call twice (e.g. a signal handler and a finally block). */
function once(services: Services): Services {
  let stopping: Promise<void> | undefined;
  return { ...services, stop: () => (stopping ??= services.stop()) };
}

async function noop(): Promise<void> {}
