import { stopStarted } from './globalSetup';

export default async function globalTeardown(): Promise<void> {
  await stopStarted();
}
