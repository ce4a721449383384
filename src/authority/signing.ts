/**
 * Signing the events of contract §4b: an Ed25519 private key (PKCS#8 PEM, as
 * `compaction-guard keys new` writes it) and its keyId sign the canonical payload
 * (src/engine/authority.ts) of a LossAcknowledged, SpillCompleted or SpillFailed.
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { readKeyFile } from './keyFileAccess';
import { payloadBytes, type SignableEvent } from '../engine/authority';
import type { Signature } from '../engine/events';
import { ConfigError } from '../config/settings';
import { publicKeyText } from './ring';

/** A private key and the keyId the ring knows it by. */
export interface SigningKey {
  keyId: string;
  /** The name the ring gives it (a tool's default `by`). */
  name: string;
  privateKey: KeyObject;
}

/**
 * How long a signature stays valid by default: long enough for a send and its retries, short
 * enough that a copy read off the topic is useless soon after (contract §4b, replay).
 */
export const DEFAULT_SIGNATURE_VALIDITY_MS = 15 * 60_000;

/**
 * A signature's `expiresAt` (contract §4b, last paragraph): the validity counted from the later
 * of the signer's clock and the session's lastEventAt (when known), so a session whose
 * orchestrator's clock runs ahead of the signer's does not see a fresh signature as expired.
 */
export function expiryFrom(
  now: number,
  lastEventAt: number | null = null,
  validityMs: number = DEFAULT_SIGNATURE_VALIDITY_MS,
): number {
  return Math.max(now, lastEventAt ?? 0) + validityMs;
}

/** The signature of `event` (its own `signature` field is ignored) by `key`, valid until `expiresAt`. */
export function signatureFor(event: SignableEvent, key: SigningKey, expiresAt: number): Signature {
  const value = sign(null, payloadBytes(event, key.keyId, expiresAt), key.privateKey);
  return { keyId: key.keyId, expiresAt, value: value.toString('base64') };
}

/** `event` with its signature set. */
export function signed<E extends SignableEvent>(event: E, key: SigningKey, expiresAt: number): E {
  return { ...event, signature: signatureFor(event, key, expiresAt) };
}

/**
 * The file a signing key is kept in: the private key as PKCS#8 PEM, with the keyId and name in
 * PEM-style header lines before it (`keyId: ...`, `name: ...`), so one file is all a tool needs.
 */
export function signingKeyText(key: SigningKey): string {
  const pem = key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return `keyId: ${key.keyId}\nname: ${key.name}\n${pem}`;
}

export function parseSigningKey(text: string, source = 'signing key'): SigningKey {
  const keyId = /^keyId: (.+)$/m.exec(text)?.[1]?.trim();
  const name = /^name: (.+)$/m.exec(text)?.[1]?.trim() ?? keyId;
  if (!keyId) throw new ConfigError(`${source}: no "keyId: ..." line before the PEM key`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: text.slice(text.indexOf('-----BEGIN')), format: 'pem' });
  } catch (e) {
    throw new ConfigError(`${source}: not a PEM private key (${(e as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new ConfigError(
      `${source}: an ${privateKey.asymmetricKeyType ?? 'unknown'} key, expected Ed25519`,
    );
  }
  return { keyId, name: name ?? keyId, privateKey };
}

/**
 * Reads a signing key file. Throws ConfigError when it does not read, or when it is not this
 * user's (or root's) or others can read or write it (src/authority/keyFileAccess.ts).
 */
export function loadSigningKey(path: string): SigningKey {
  return parseSigningKey(readKeyFile(path, 'signing key'), path);
}

/** The ring entry's public key text of a signing key. */
export function publicKeyOf(key: SigningKey): string {
  return publicKeyText(createPublicKey(key.privateKey));
}
