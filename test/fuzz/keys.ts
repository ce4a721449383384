/**
 * The fuzz target's trusted key ring (contract §4b), made from fixed seeds so that signed events
 * kept in the corpus as bytes verify in every later run: a SPILL key, an ACKNOWLEDGE key, and two
 * the generator signs with to be refused (one outside the ring, one in it without the role).
 */
import type { TrustedKeyRing } from '../../src/engine';
import { fixedTestKey, ringOf, type TestKey } from '../support/keys';

export const FUZZ_KEYS = {
  spill: fixedTestKey('fuzz-spill', ['SPILL'], 1),
  acknowledge: fixedTestKey('fuzz-ack', ['ACKNOWLEDGE'], 2),
  /** In the ring, but with the other role for whatever it signs in a case. */
  wrongRole: fixedTestKey('fuzz-other', ['SPILL'], 3),
  /** Not in the ring. */
  stranger: fixedTestKey('fuzz-stranger', ['SPILL', 'ACKNOWLEDGE'], 4),
} satisfies Record<string, TestKey>;

let ring: TrustedKeyRing | null = null;

export function fuzzRing(): TrustedKeyRing {
  ring ??= ringOf(FUZZ_KEYS.spill, FUZZ_KEYS.acknowledge, FUZZ_KEYS.wrongRole);
  return ring;
}
