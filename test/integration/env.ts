/** Endpoints exported by globalSetup.ts; failing loudly beats tests hanging on a wrong address. */
export function serviceEnv(): { brokers: string[]; registryUrl: string } {
  const brokers = process.env.KAFKA_BROKERS;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL;
  if (!brokers || !registryUrl) {
    throw new Error(
      'KAFKA_BROKERS / SCHEMA_REGISTRY_URL unset: run via jest --selectProjects integration',
    );
  }
  return { brokers: brokers.split(','), registryUrl };
}
