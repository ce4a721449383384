/**
 * The authority check of contract §4b for the reference model, written from the contract text
 * and nothing of src/engine: the canonical payload is written by hand (not by JSON.stringify),
 * the base64 is judged canonical by decoding and encoding again, and signatures are verified with
 * node:crypto against the public key itself. The engine computes each of these its own way, so
 * the differential test cross-checks both.
 */
import { type KeyObject, verify } from 'node:crypto';
import type { LossAcknowledged, SpillCompleted, SpillFailed } from '../../src/engine';

export type SignableEvent = SpillCompleted | SpillFailed | LossAcknowledged;
export type Role = 'ACKNOWLEDGE' | 'SPILL';

/** One key of the model's ring: the public key itself, not a verify function. */
export interface ModelKey {
  keyId: string;
  roles: readonly Role[];
  publicKey: KeyObject;
}

export type ModelRing = ReadonlyMap<string, ModelKey>;

/** The checks of §4b, in order; the message of UNAUTHORIZED_EVENT names the one that failed. */
export type Failure =
  'no signature' | 'unknown key' | 'key without the role' | 'bad signature' | 'expired';

export function isSignable(e: { type: string }): e is SignableEvent {
  return e.type === 'LossAcknowledged' || e.type === 'SpillCompleted' || e.type === 'SpillFailed';
}

/**
 * A JSON string literal as §4b writes it: only `"`, `\` and U+0000–U+001F escaped, the five
 * short escapes where JSON has them, the others as `\u00xx` in lowercase hex.
 */
function stringLiteral(s: string): string {
  const SHORT: Record<string, string> = { '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r' };
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (SHORT[ch] !== undefined) out += `\\${SHORT[ch]}`;
    else if (c < 0x20) out += `\\u00${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function element(v: string | number | null): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return stringLiteral(v);
  if (!Number.isSafeInteger(v)) throw new Error(`not an integer field: ${v}`);
  return String(v); // plain decimal digits: every integer field is below 2^52 (§3)
}

/** §4b: the canonical payload's values, in the order the contract lists them per type. */
export function payloadElements(
  e: SignableEvent,
  keyId: string,
  expiresAt: number,
): (string | number | null)[] {
  const head = ['compaction-guard/1', e.type, e.sessionId, e.seq, e.eventId, e.occurredAt];
  const tail = [keyId, expiresAt];
  switch (e.type) {
    case 'LossAcknowledged':
      return [...head, ...tail, e.unit, e.range.start, e.range.end, e.by, e.reason];
    case 'SpillCompleted':
      return [...head, ...tail, e.spillRequestId, e.handle, e.unit, e.range.start, e.range.end];
    case 'SpillFailed':
      return [...head, ...tail, e.spillRequestId, e.error];
  }
}

/** The UTF-8 bytes of the canonical payload: a JSON array with no whitespace. */
export function canonicalPayload(e: SignableEvent, keyId: string, expiresAt: number): Buffer {
  const text = `[${payloadElements(e, keyId, expiresAt).map(element).join(',')}]`;
  return Buffer.from(text, 'utf8');
}

/**
 * §4b: standard base64 with padding, canonical (decoding it and encoding the 64 bytes again
 * gives the same text); the 64 bytes, or null.
 */
export function canonicalSignatureBytes(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/=]*$/.test(text)) return null; // Buffer would skip other characters
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 64 && bytes.toString('base64') === text ? bytes : null;
}

const ROLE_OF: Record<SignableEvent['type'], Role> = {
  LossAcknowledged: 'ACKNOWLEDGE',
  SpillCompleted: 'SPILL',
  SpillFailed: 'SPILL',
};

/**
 * §4b's five checks in the contract's order; null when the event is authorized. `lastEventAt`
 * is the session's as it was before this event (no lower bound when null).
 */
export function failedCheck(
  e: SignableEvent,
  ring: ModelRing,
  lastEventAt: number | null,
): Failure | null {
  const sig = e.signature;
  if (sig === null || sig === undefined) return 'no signature';
  const key = ring.get(sig.keyId);
  if (!key) return 'unknown key';
  if (!key.roles.includes(ROLE_OF[e.type])) return 'key without the role';
  const bytes = canonicalSignatureBytes(sig.value);
  if (!bytes) return 'bad signature';
  if (!verify(null, canonicalPayload(e, sig.keyId, sig.expiresAt), key.publicKey, bytes))
    return 'bad signature';
  if (sig.expiresAt < e.occurredAt) return 'expired';
  if (lastEventAt !== null && sig.expiresAt < lastEventAt) return 'expired';
  return null;
}
