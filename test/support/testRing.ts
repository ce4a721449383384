/**
 * A trusted key ring for tests of contract §4b: Ed25519 keys from fixed seeds (so a shrunk
 * counterexample replays byte for byte), the engine's ring read by the product's own parser from
 * the ring file's JSON, the reference model's ring holding the public keys themselves, and one
 * outsider key the ring does not know.
 */
import { type KeyObject, createPrivateKey, createPublicKey } from 'node:crypto';
import type { AuthorityRole, TrustedKeyRing } from '../../src/engine';
import { parseKeyRing, publicKeyText } from '../../src/authority/ring';
import type { SigningKey } from '../../src/authority/signing';
import type { ModelRing } from './referenceAuthority';

export interface TestKey extends SigningKey {
  roles: AuthorityRole[];
  publicKey: KeyObject;
}

export interface TestRing {
  keys: TestKey[];
  /** A valid Ed25519 key whose keyId the ring does not hold. */
  outsider: TestKey;
  /** The engine's ring, read by src/authority/ring.ts from the ring file's text. */
  engine: TrustedKeyRing;
  /** The reference model's ring. */
  model: ModelRing;
}

/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function keyFromSeed(n: number, keyId: string, roles: AuthorityRole[]): TestKey {
  const seed = Buffer.alloc(32, 0);
  seed.writeUInt32BE(n + 1, 0);
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  return { keyId, name: `${keyId} holder`, roles, privateKey, publicKey: createPublicKey(privateKey) };
}

const rings = new Map<string, TestRing>();

/** The ring of keys `key-0`, `key-1`, ... with these roles (built once per list of roles). */
export function testRing(roles: readonly AuthorityRole[][]): TestRing {
  const name = JSON.stringify(roles);
  let ring = rings.get(name);
  if (!ring) rings.set(name, (ring = buildRing(roles)));
  return ring;
}

function buildRing(roles: readonly AuthorityRole[][]): TestRing {
  const keys = roles.map((r, i) => keyFromSeed(i, `key-${i}`, [...r]));
  const file = {
    keys: keys.map((k) => ({
      keyId: k.keyId,
      name: k.name,
      publicKey: publicKeyText(k.publicKey),
      roles: k.roles,
    })),
  };
  return {
    keys,
    outsider: keyFromSeed(99, 'outsider', ['ACKNOWLEDGE', 'SPILL']),
    engine: parseKeyRing(JSON.stringify(file), 'test ring'),
    model: new Map(keys.map((k) => [k.keyId, { keyId: k.keyId, roles: k.roles, publicKey: k.publicKey }])),
  };
}
