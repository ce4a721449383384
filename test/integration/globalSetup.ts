import { provideServices, type Services } from '../../src/services';
import { seconds } from '../../src/services/processes';

/** Shared with globalTeardown.ts, which Jest runs in this same (parent) process. */
export const SERVICES_KEY = '__compactionGuardServices__';
const EXPORTED = ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'CG_SERVICES_MODE'] as const;

interface Started {
  services: Services;
  /** The env before we exported endpoints, so a second run (jest --watch) starts afresh. */
  previousEnv: Record<string, string | undefined>;
}

/**
 * Starts Kafka + registry once for all integration tests (or reuses KAFKA_BROKERS /
 * SCHEMA_REGISTRY_URL when set, e.g. by a CI script that runs src/services/standalone.ts).
 * Test workers are forked after this runs, so they inherit the env vars set here.
 */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const previousEnv = Object.fromEntries(EXPORTED.map((name) => [name, process.env[name]]));
  const services = await provideServices();
  process.env.KAFKA_BROKERS = services.brokers.join(',');
  process.env.SCHEMA_REGISTRY_URL = services.registryUrl;
  process.env.CG_SERVICES_MODE = services.mode;
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  const state: Started = { services, previousEnv };
  (globalThis as Record<string, unknown>)[SERVICES_KEY] = state;
  process.stderr.write(
    `\n[services] ${services.mode}: Kafka ${services.brokers.join(',')}, registry ` +
      `${services.registryUrl} (ready in ${seconds(started)} s)\n`,
  );
}

/** Stops what globalSetup started (endpoints given by env are left alone) and restores env. */
export async function stopStarted(): Promise<void> {
  const state = (globalThis as Record<string, unknown>)[SERVICES_KEY] as Started | undefined;
  if (state === undefined) return;
  delete (globalThis as Record<string, unknown>)[SERVICES_KEY];
  await state.services.stop();
  for (const [name, value] of Object.entries(state.previousEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}
