/**
 * Signing test events the ways contract §4b tells apart: correctly, not at all, forged, by a key
 * without the role, by a key the ring does not hold, expired (before its own occurredAt, or
 * before the session's lastEventAt: the event is back-dated), or with a valid signature written
 * as non-canonical base64. The product's signer (src/authority/signing.ts) does the signing; the
 * reference model checks the result its own way.
 */
import fc from 'fast-check';
import { signatureFor } from '../../src/authority/signing';
import type {
  AuthorityRole,
  LossAcknowledged,
  SpillCompleted,
  SpillFailed,
} from '../../src/engine';
import type { RingKey, TestRing } from './testRing';

export type SignableEvent = SpillCompleted | SpillFailed | LossAcknowledged;

export const AUTH_KINDS = [
  'signed',
  'unsigned',
  'forged',
  'wrongRole',
  'unknownKey',
  'expired',
  'expiredLast',
  'nonCanonical',
] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

/** The kinds a producer without a key of the right role can send. */
export const UNAUTHORIZED_KINDS: readonly AuthKind[] = AUTH_KINDS.filter((k) => k !== 'signed');

/** Mostly signed correctly; every other kind about as often as one another. */
export const authArb: fc.Arbitrary<AuthKind> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<AuthKind>('signed') },
  { weight: 7, arbitrary: fc.constantFrom<AuthKind>(...UNAUTHORIZED_KINDS) },
);

/** A ring of 1–3 keys, each with role ACKNOWLEDGE, SPILL or both. */
export const rolesArb: fc.Arbitrary<AuthorityRole[][]> = fc.array(
  fc.constantFrom<AuthorityRole[]>(['ACKNOWLEDGE'], ['SPILL'], ['ACKNOWLEDGE', 'SPILL']),
  { minLength: 1, maxLength: 3 },
);

function roleOf(e: SignableEvent): AuthorityRole {
  return e.type === 'LossAcknowledged' ? 'ACKNOWLEDGE' : 'SPILL';
}

/** A ring key with the event's role (any key if none has it), chosen by `pick`. */
function keyWith(ring: TestRing, e: SignableEvent, pick: number): RingKey {
  const fit = ring.keys.filter((k) => k.entry.roles.includes(roleOf(e)));
  const from = fit.length > 0 ? fit : ring.keys;
  return from[pick % from.length]!;
}

/** A ring key without the event's role, or the outsider when every key has it. */
function keyWithout(ring: TestRing, e: SignableEvent, pick: number): RingKey {
  const misfit = ring.keys.filter((k) => !k.entry.roles.includes(roleOf(e)));
  return misfit.length > 0 ? misfit[pick % misfit.length]! : ring.outsider;
}

/** Writes the same 64 bytes as a base64 text that is not canonical. */
function nonCanonical(value: string, pick: number): string {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  switch (pick % 4) {
    case 0: {
      // The last character's four unused low bits set: decoders drop them, the text differs.
      const v = ALPHABET.indexOf(value[85]!);
      return `${value.slice(0, 85)}${ALPHABET[v | 1]}==`;
    }
    case 1:
      return value.slice(0, 86); // no padding
    case 2:
      return `${value.slice(0, 40)}\n${value.slice(40)}`; // a line break inside
    default:
      return value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''); // base64url
  }
}

/**
 * `e` with a signature of `kind`. `e.occurredAt` is final (a back-dated `expiredLast` event is
 * back-dated before this call); a correct signature is valid until occurredAt + validity.
 */
export function authorize(
  e: SignableEvent,
  kind: AuthKind,
  ring: TestRing,
  pick: number,
  validity: number,
): SignableEvent {
  const until = e.occurredAt + validity;
  const sign = (key: RingKey, expiresAt: number, over: SignableEvent = e) => ({
    ...e,
    signature: signatureFor(over, key.signing, expiresAt),
  });
  switch (kind) {
    case 'signed':
      return sign(keyWith(ring, e, pick), until);
    case 'unsigned':
      return { ...e, signature: null };
    case 'forged': {
      const key = keyWith(ring, e, pick);
      if (pick % 2 === 0) return sign(key, until, { ...e, eventId: `${e.eventId}'` });
      return {
        ...e,
        signature: {
          keyId: key.entry.keyId,
          expiresAt: until,
          value: randomBytesFor(e).toString('base64'),
        },
      };
    }
    case 'wrongRole':
      return sign(keyWithout(ring, e, pick), until);
    case 'unknownKey':
      return sign(ring.outsider, until);
    case 'expired':
      return sign(keyWith(ring, e, pick), Math.max(0, e.occurredAt - 1 - (pick % 3) * 500));
    case 'expiredLast':
      // Back-dated below the session's last event by the caller; valid at its own occurredAt.
      return sign(keyWith(ring, e, pick), e.occurredAt);
    case 'nonCanonical': {
      const s = sign(keyWith(ring, e, pick), until);
      return { ...s, signature: { ...s.signature, value: nonCanonical(s.signature.value, pick) } };
    }
  }
}

/** 64 bytes that are no signature of anything; not random, so a counterexample replays. */
function randomBytesFor(e: SignableEvent): Buffer {
  const out = Buffer.alloc(64);
  const seed = `${e.eventId}/${e.occurredAt}`;
  for (let i = 0; i < 64; i++) out[i] = (seed.charCodeAt(i % seed.length) * 31 + i * 17) & 0xff;
  return out;
}
