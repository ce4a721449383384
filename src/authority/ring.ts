/**
 * The trusted key ring of contract §4b, read from its JSON file:
 * `{"keys": [{"keyId", "name", "publicKey": "<standard base64 of the 32-byte raw key>", "roles"}]}`.
 * A ring that does not read is a configuration error, never an empty ring (an empty ring would
 * accept nothing, and a ring read as "no ring" would accept everything unsigned).
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import {
  AUTHORITY_ROLES,
  type AuthorityRole,
  type TrustedKey,
  type TrustedKeyRing,
} from '../engine/authority';
import { ConfigError } from '../config/settings';
import { readKeyFile } from './keyFileAccess';

/** One entry of the ring file, as written by `compaction-guard keys new`. */
export interface RingEntry {
  keyId: string;
  name: string;
  publicKey: string;
  roles: AuthorityRole[];
}

export interface RingFile {
  keys: RingEntry[];
}

const MAX_NAME_BYTES = 256;
/** SubjectPublicKeyInfo DER of an Ed25519 key, up to its 32 raw bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The 32 raw bytes of an Ed25519 public key from canonical standard base64, or null. */
export function rawPublicKey(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) return null;
  const raw = Buffer.from(text, 'base64');
  return raw.length === 32 && raw.toString('base64') === text ? raw : null;
}

export function publicKeyObject(raw: Buffer): KeyObject {
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
}

/** The base64 raw form of a public key object (what a ring entry holds). */
export function publicKeyText(key: KeyObject): string {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(ED25519_SPKI_PREFIX.length).toString('base64');
}

function fail(where: string, what: string): never {
  throw new ConfigError(`trusted key ring ${where}: ${what}`);
}

function checkedText(value: unknown, field: string, where: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    fail(where, `${field} must be a non-empty string`);
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_NAME_BYTES) {
    fail(where, `${field} is longer than ${MAX_NAME_BYTES} bytes`);
  }
  return value;
}

function trustedKey(entry: unknown, index: number, source: string): TrustedKey {
  const where = `${source} keys[${index}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fail(where, 'expected an object');
  }
  const e = entry as Record<string, unknown>;
  const keyId = checkedText(e.keyId, 'keyId', where);
  const name = checkedText(e.name, 'name', where);
  const raw = typeof e.publicKey === 'string' ? rawPublicKey(e.publicKey) : null;
  if (raw === null) {
    fail(where, 'publicKey must be the standard base64 of a 32-byte raw Ed25519 key');
  }
  if (!Array.isArray(e.roles) || e.roles.length === 0) {
    fail(where, `roles must be a non-empty list of ${AUTHORITY_ROLES.join(', ')}`);
  }
  for (const role of e.roles) {
    if (!AUTHORITY_ROLES.includes(role as AuthorityRole)) {
      fail(where, `unknown role ${JSON.stringify(role)} (expected ${AUTHORITY_ROLES.join(', ')})`);
    }
  }
  const key = publicKeyObject(raw);
  return {
    keyId,
    name,
    roles: [...new Set(e.roles as AuthorityRole[])],
    verify: (payload, signature) => verify(null, payload, key, signature),
  };
}

/** Parses a ring file's text; `source` names it in errors. Throws ConfigError. */
export function parseKeyRing(text: string, source = 'file'): TrustedKeyRing {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(source, `not JSON (${(e as Error).message})`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    fail(source, 'expected {"keys": [...]} with at least one key');
  }
  const ring = new Map<string, TrustedKey>();
  keys.forEach((entry, i) => {
    const key = trustedKey(entry, i, source);
    if (ring.has(key.keyId)) fail(`${source} keys[${i}]`, `keyId ${key.keyId} appears twice`);
    ring.set(key.keyId, key);
  });
  return ring;
}

/**
 * Reads and parses a ring file. Throws ConfigError (unreadable file included, and one that is
 * not this user's or root's or that others can write: src/authority/keyFileAccess.ts).
 */
export function loadKeyRing(path: string): TrustedKeyRing {
  return parseKeyRing(readKeyFile(path, 'trusted key ring'), path);
}
