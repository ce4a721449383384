/**
 * Ed25519 keys and trusted key rings for tests (contract §4b): a fresh key pair per call, its
 * ring entry as `compaction-guard keys new` writes it, and the ring the engine is given.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { AuthorityRole, SignableEvent, TrustedKeyRing } from '../../src/engine/authority';
import { parseKeyRing, publicKeyText, type RingEntry } from '../../src/authority/ring';
import { signed, type SigningKey } from '../../src/authority/signing';

export interface TestKey {
  signing: SigningKey;
  entry: RingEntry;
}

export function testKey(name: string, roles: AuthorityRole[], keyId = `${name}-key`): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    signing: { keyId, name, privateKey },
    entry: { keyId, name, publicKey: publicKeyText(publicKey), roles },
  };
}

/** The ring file's text for these keys. */
export function ringText(...keys: TestKey[]): string {
  return JSON.stringify({ keys: keys.map((k) => k.entry) });
}

export function ringOf(...keys: TestKey[]): TrustedKeyRing {
  return parseKeyRing(ringText(...keys), 'test ring');
}

/** `event` signed by `key`, valid until `expiresAt` (default: an hour after it occurred). */
export function signedBy<E extends SignableEvent>(event: E, key: TestKey, expiresAt?: number): E {
  return signed(event, key.signing, expiresAt ?? event.occurredAt + 3_600_000);
}
