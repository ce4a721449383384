/**
 * Registering the schemas at start-up, with patience: instances starting together race to
 * create a subject's compatibility rule (the loser's next attempt finds it in place), and a
 * shared registry can stall for a call's timeout now and then. A registry that stays
 * unreachable still fails start-up, with REGISTRY_UNREACHABLE.
 */
import { StartupError } from '../errors';
import { retry } from '../retry';
import type { RegistryCodec } from './codec';

export const REGISTRATION_ATTEMPTS = 5;

export async function registerSchemas(
  codec: RegistryCodec,
  registryUrl: string | null,
  onRetry?: (e: unknown, attempt: number) => void,
): Promise<void> {
  await retry(() => codec.registerAll(), {
    attempts: REGISTRATION_ATTEMPTS,
    backoff: { initialMs: 500, growth: 'linear' },
    ...(onRetry ? { onRetry } : {}),
    giveUp: (e, attempts, retriable) =>
      retriable
        ? new StartupError(
            'REGISTRY_UNREACHABLE',
            `cannot register the schemas at ${registryUrl ?? '(no registry)'} (${attempts} attempts; last: ${(e as Error).message}) ` +
              '- check SCHEMA_REGISTRY_URL (--registry-url) and that the registry is up',
            { cause: e },
          )
        : e,
  });
}
