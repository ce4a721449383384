/**
 * Ed25519 keys and trusted key rings for tests (contract §4b): a fresh key pair per call, its
 * ring entry as `compaction-guard keys new` writes it, and the ring the engine is given.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
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
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The same key pair for the same seed, every time: a property test's shrunk counterexample must
 * replay signature for signature.
 */
export function seededKey(
  seed: number,
  name: string,
  roles: AuthorityRole[],
  keyId = `${name}-key`,
): TestKey & { publicKey: KeyObject } {
  const raw = Buffer.alloc(32, 0);
  raw.writeUInt32BE(seed, 0);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_SEED_PREFIX, raw]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  return {
    signing: { keyId, name, privateKey },
    entry: { keyId, name, publicKey: publicKeyText(publicKey), roles },
    publicKey,
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
