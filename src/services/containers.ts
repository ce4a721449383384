import { CCOMPAT_PATH } from './localRegistry';
import { settledWithin } from '../time';
import { DEFAULT_REGISTRY_VERSION } from './maven';

/**
 * The testcontainers path, used only when a Docker engine answers. The packages are loaded
 * lazily: testcontainers 12.x declares Node >= 22.22 and, on Node 20, throws while loading
 * (its undici 8 calls zlib.createZstdDecompress, absent there). Loading it eagerly would break
 * the local path too; here a failed load simply means "no Docker".
 */
type Testcontainers = typeof import('testcontainers');
type KafkaModule = typeof import('@testcontainers/kafka');

/** Confluent Platform 8.0 = Apache Kafka 4.0; KafkaContainer runs 8.x images in KRaft mode. */
const KAFKA_IMAGE = 'confluentinc/cp-kafka:8.0.0';
/** The Apicurio version the local (Maven) path runs, so both paths test the same registry. */
const REGISTRY_IMAGE = `apicurio/apicurio-registry:${DEFAULT_REGISTRY_VERSION}`;
/** KafkaContainer's plaintext listener for clients outside the container network. */
const KAFKA_CLIENT_PORT = 9093;
const REGISTRY_PORT = 8080;

export interface StartedContainers {
  brokers: string[];
  registryUrl: string;
  stop(): Promise<void>;
}

/** True when testcontainers loads and finds a container runtime within `timeoutMs`. */
export async function dockerAvailable(timeoutMs: number): Promise<boolean> {
  const probe = (async () => {
    const tc = await loadTestcontainers();
    if (tc === undefined) return false;
    await tc.getContainerRuntimeClient();
    return true;
    // Any failure of the probe (no module, no socket, no permission) is the answer: no runtime.
  })().catch(() => false);
  return settledWithin(probe, timeoutMs, false, { unref: true });
}

export async function startContainers(startTimeoutMs: number): Promise<StartedContainers> {
  const tc = await loadTestcontainers();
  if (tc === undefined) throw new Error('testcontainers cannot be loaded on this Node version');
  const { KafkaContainer } = (await import('@testcontainers/kafka')) as KafkaModule;
  const [kafkaResult, registryResult] = await Promise.allSettled([
    new KafkaContainer(KAFKA_IMAGE).withStartupTimeout(startTimeoutMs).start(),
    new tc.GenericContainer(REGISTRY_IMAGE)
      .withExposedPorts(REGISTRY_PORT)
      .withWaitStrategy(
        tc.Wait.forHttp(`${CCOMPAT_PATH}/subjects`, REGISTRY_PORT).forStatusCode(200),
      )
      .withStartupTimeout(startTimeoutMs)
      .start(),
  ]);
  if (kafkaResult.status === 'rejected' || registryResult.status === 'rejected') {
    // Do not leave the one that did start running until the reaper finds it.
    for (const r of [kafkaResult, registryResult])
      if (r.status === 'fulfilled') await r.value.stop();
    const failed = kafkaResult.status === 'rejected' ? kafkaResult : registryResult;
    throw (failed as PromiseRejectedResult).reason;
  }
  const kafka = kafkaResult.value;
  const registry = registryResult.value;
  return {
    brokers: [`${kafka.getHost()}:${kafka.getMappedPort(KAFKA_CLIENT_PORT)}`],
    registryUrl: `http://${registry.getHost()}:${registry.getMappedPort(REGISTRY_PORT)}${CCOMPAT_PATH}`,
    async stop() {
      await Promise.all([kafka.stop(), registry.stop()]);
    },
  };
}

async function loadTestcontainers(): Promise<Testcontainers | undefined> {
  try {
    return (await import('testcontainers')) as Testcontainers;
  } catch {
    return undefined;
  }
}
