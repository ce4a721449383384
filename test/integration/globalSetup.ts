import { provideServices, type Services } from '../../src/services';
import { seconds } from '../../src/services/processes';

/** Shared with globalTeardown.ts, which Jest runs in this same (parent) process. */
export const SERVICES_KEY = '__compactionGuardServices__';

/**
 * Starts Kafka + registry once for all integration tests (or reuses KAFKA_BROKERS /
 * SCHEMA_REGISTRY_URL when set, e.g. by a CI script that runs src/services/standalone.ts).
 * Test workers are forked after this runs, so they inherit the env vars set here.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const services = await provideServices();
  process.env.KAFKA_BROKERS = services.brokers.join(',');
  process.env.SCHEMA_REGISTRY_URL = services.registryUrl;
  process.env.CG_SERVICES_MODE = services.mode;
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  (globalThis as Record<string, unknown>)[SERVICES_KEY] = services;
  process.stderr.write(
    `\n[services] ${services.mode}: Kafka ${services.brokers.join(',')}, registry ` +
      `${services.registryUrl} (ready in ${seconds(started)} s)\n`,
  );
}

export type { Services };
