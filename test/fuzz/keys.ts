/**
 * The fuzz target's trusted key ring (contract §4b), made from fixed seeds so that signed events
 * kept in the corpus as bytes verify in every later run: a SPILL key, an ACKNOWLEDGE key, and two
 * the generator signs with to be refused (one outside the ring, one in it without the role).
 */
import type { TrustedKeyRing } from '../../src/engine';
import { ringOf, seededKey, type TestKey } from '../support/keys';

export const FUZZ_KEYS = {
  spill: seededKey(1, 'fuzz-spill', ['SPILL']),
  acknowledge: seededKey(2, 'fuzz-ack', ['ACKNOWLEDGE']),
  /** In the ring, but with the other role for whatever it signs in a case. */
  wrongRole: seededKey(3, 'fuzz-other', ['SPILL']),
  /** Not in the ring. */
  stranger: seededKey(4, 'fuzz-stranger', ['SPILL', 'ACKNOWLEDGE']),
} satisfies Record<string, TestKey>;

let ring: TrustedKeyRing | null = null;

export function fuzzRing(): TrustedKeyRing {
  ring ??= ringOf(FUZZ_KEYS.spill, FUZZ_KEYS.acknowledge, FUZZ_KEYS.wrongRole);
  return ring;
}
