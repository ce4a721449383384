/**
 * Authority (contract §4b): with a trusted key ring, a LossAcknowledged must be signed by a key
 * with role ACKNOWLEDGE, a SpillCompleted or SpillFailed by a key with role SPILL, over the
 * event's canonical payload. Pure: the ring's keys carry their own `verify` (the shell builds it
 * from the public key with node:crypto, src/authority/ring.ts), so the engine does no crypto I/O
 * and imports nothing from Node.
 */
import { SIGNABLE_EVENT_TYPES, type SignableEvent } from './contract';
import { unreachable } from './unreachable';

export { SIGNABLE_EVENT_TYPES, type SignableEvent };

/** What a key of the ring may authorize. */
export type AuthorityRole = 'ACKNOWLEDGE' | 'SPILL';
export const AUTHORITY_ROLES: readonly AuthorityRole[] = ['ACKNOWLEDGE', 'SPILL'];

export interface TrustedKey {
  keyId: string;
  name: string;
  roles: readonly AuthorityRole[];
  /** Is `signature` (64 raw bytes) a valid Ed25519 signature of `payload` by this key? */
  verify(payload: Uint8Array, signature: Uint8Array): boolean;
}

/** The trusted key ring, by keyId. */
export type TrustedKeyRing = ReadonlyMap<string, TrustedKey>;

/** Is `e` of a type §4b covers (generated from the schema: the records with a `signature`)? */
export function isSignable(e: { type: string }): e is SignableEvent {
  return (SIGNABLE_EVENT_TYPES as readonly string[]).includes(e.type);
}

/** The role each signable event type needs. */
const REQUIRED_ROLE: Record<SignableEvent['type'], AuthorityRole> = {
  LossAcknowledged: 'ACKNOWLEDGE',
  SpillCompleted: 'SPILL',
  SpillFailed: 'SPILL',
};

/** The role a signable event needs. */
export function requiredRole(e: SignableEvent): AuthorityRole {
  return REQUIRED_ROLE[e.type];
}

/** The payload's first element: a domain tag, so a signature of ours means nothing elsewhere. */
export const PAYLOAD_TAG = 'compaction-guard/1';

/**
 * The canonical payload's values in order (contract §4b). `JSON.stringify` of this array writes
 * exactly the canonical text: no whitespace, strings escaping only `"`, `\` and U+0000–U+001F
 * (lone surrogates, which it would escape too, never get here: they are NOT_UTF8, §3), integers
 * as plain digits (every integer is at most 2^52 − 1, §3), `seq` null when out of band.
 */
export function payloadValues(
  e: SignableEvent,
  keyId: string,
  expiresAt: number,
): (string | number | null)[] {
  const head = [PAYLOAD_TAG, e.type, e.sessionId, e.seq, e.eventId, e.occurredAt, keyId, expiresAt];
  switch (e.type) {
    case 'LossAcknowledged':
      return [...head, e.unit, e.range.start, e.range.end, e.by, e.reason];
    case 'SpillCompleted':
      return [...head, e.spillRequestId, e.handle, e.unit, e.range.start, e.range.end];
    case 'SpillFailed':
      return [...head, e.spillRequestId, e.error];
    default:
      return unreachable(e);
  }
}

/** The canonical payload as text; sign or verify its UTF-8 bytes (`payloadBytes`). */
export function canonicalPayload(e: SignableEvent, keyId: string, expiresAt: number): string {
  return JSON.stringify(payloadValues(e, keyId, expiresAt));
}

const UTF8 = new TextEncoder();

export function payloadBytes(e: SignableEvent, keyId: string, expiresAt: number): Uint8Array {
  return UTF8.encode(canonicalPayload(e, keyId, expiresAt));
}

/** Which check an event failed (contract §4b: the message says which). */
export type AuthorityFailure =
  'no signature' | 'unknown key' | 'key without the role' | 'bad signature' | 'expired';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const SEXTET = new Map([...ALPHABET].map((c, i) => [c, i] as const));
/** 64 bytes in standard base64 with padding: 86 characters and `==`. */
const SIGNATURE_TEXT = /^[A-Za-z0-9+/]{86}==$/;

/**
 * The 64 bytes of a signature written in canonical standard base64 (RFC 4648 §4, padded: the
 * bits after the last byte are zero, so encoding the bytes again gives the same text), or null.
 * A non-canonical text would let one signature be written several ways.
 */
export function decodeSignatureValue(text: string): Uint8Array | null {
  if (!SIGNATURE_TEXT.test(text)) return null;
  const out = new Uint8Array(64);
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (let i = 0; i < 86; i++) {
    acc = (acc << 6) | SEXTET.get(text[i]!)!;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  // 86 × 6 = 516 bits = 64 bytes + 4 bits that must be zero.
  return acc === 0 ? out : null;
}

/**
 * contract §4b, in its order: a signature, a key of the ring, with the role, a valid signature
 * (canonical base64, Ed25519 over the canonical payload), not expired (expiresAt ≥ occurredAt
 * and ≥ the session's lastEventAt before this event; no lower bound when none). Null: authorized.
 */
export function authorityFailure(
  e: SignableEvent,
  ring: TrustedKeyRing,
  lastEventAt: number | null,
): AuthorityFailure | null {
  const sig = e.signature;
  // Absent counts as null (§3 default), also on an event built by hand rather than decoded.
  if (sig === null || sig === undefined) return 'no signature';
  const key = ring.get(sig.keyId);
  if (key === undefined) return 'unknown key';
  if (!key.roles.includes(requiredRole(e))) return 'key without the role';
  const value = decodeSignatureValue(sig.value);
  if (value === null || !key.verify(payloadBytes(e, sig.keyId, sig.expiresAt), value)) {
    return 'bad signature';
  }
  if (sig.expiresAt < e.occurredAt || (lastEventAt !== null && sig.expiresAt < lastEventAt)) {
    return 'expired';
  }
  return null;
}
