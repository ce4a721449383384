/**
 * Ed25519 keys and trusted key rings for tests (contract §4b): a fresh key pair per call, its
 * ring entry as `compaction-guard keys new` writes it, and the ring the engine is given.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
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

/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A key pair made from a fixed seed byte: the same key in every run, so that signed events kept
 * as bytes (the fuzz corpus) still verify later. Test-only: anyone can make this key.
 */
export function fixedTestKey(
  name: string,
  roles: AuthorityRole[],
  seedByte: number,
  keyId = `${name}-key`,
): TestKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.alloc(32, seedByte)]),
    format: 'der',
    type: 'pkcs8',
  });
  return {
    signing: { keyId, name, privateKey },
    entry: { keyId, name, publicKey: publicKeyText(createPublicKey(privateKey)), roles },
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
