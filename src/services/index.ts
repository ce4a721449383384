import { join } from 'node:path';
import { dockerAvailable, startContainers } from './containers';
import { startLocalKafka } from './localKafka';
import { startLocalKafkaCluster } from './localCluster';
import { startLocalRegistry } from './localRegistry';
import { ENV_NAMES, serviceSettings } from '../config/config';
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
  const settings = serviceSettings(env);
  const givenBrokers = parseBrokers(env[ENV_NAMES.brokers]);
  const givenRegistry = env[ENV_NAMES.registryUrl]?.trim().replace(/\/+$/, '') || undefined;
  if (givenBrokers !== undefined && givenRegistry !== undefined) {
    return { brokers: givenBrokers, registryUrl: givenRegistry, mode: 'external', stop: noop };
  }
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const wantDocker = opts.docker ?? settings.docker;

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

  const cache = settings.cacheDir;
  pruneLogs(join(cache, 'logs'), LOG_RETENTION_MS);
  const nodes = settings.kafkaNodes;
  const [kafka, registry] = await Promise.allSettled([
    givenBrokers === undefined
      ? nodes === 1
        ? startLocalKafka({ cacheDir: cache, version: settings.kafkaVersion, startTimeoutMs })
        : startLocalKafkaCluster({
            cacheDir: cache,
            version: settings.kafkaVersion,
            startTimeoutMs,
            nodes,
          })
      : undefined,
    givenRegistry === undefined
      ? startLocalRegistry({
          cacheDir: cache,
          version: settings.registryVersion,
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
