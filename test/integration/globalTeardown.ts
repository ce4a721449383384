import { SERVICES_KEY, type Services } from './globalSetup';

/** Stops what globalSetup started; endpoints that came from the environment are left alone. */
export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<string, unknown>)[SERVICES_KEY] as Services | undefined;
  await services?.stop();
}
