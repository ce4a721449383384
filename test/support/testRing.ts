/**
 * A trusted key ring for property tests of contract §4b: keys from fixed seeds (so a shrunk
 * counterexample replays byte for byte), the engine's ring read by the product's own parser
 * from the ring file's text, the reference model's ring holding the public keys themselves, and
 * one outsider key the ring does not know.
 */
import type { KeyObject } from 'node:crypto';
import type { AuthorityRole, TrustedKeyRing } from '../../src/engine';
import { type TestKey, ringOf, seededKey } from './keys';
import type { ModelRing } from './referenceAuthority';

export type RingKey = TestKey & { publicKey: KeyObject };

export interface TestRing {
  roles: readonly AuthorityRole[][];
  keys: RingKey[];
  /** A valid Ed25519 key whose keyId the ring does not hold. */
  outsider: RingKey;
  /** The engine's ring, read by src/authority/ring.ts from the ring file's text. */
  engine: TrustedKeyRing;
  /** The reference model's ring. */
  model: ModelRing;
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
  const keys = roles.map((r, i) => seededKey(i + 1, `holder ${i}`, [...r], `key-${i}`));
  return {
    roles,
    keys,
    outsider: seededKey(99, 'outsider', ['ACKNOWLEDGE', 'SPILL'], 'outsider'),
    engine: ringOf(...keys),
    model: new Map(
      keys.map((k) => [
        k.entry.keyId,
        { keyId: k.entry.keyId, roles: k.entry.roles, publicKey: k.publicKey },
      ]),
    ),
  };
}
