/**
 * Making keys of contract §4b and keeping their files: a new Ed25519 key with its ring entry
 * (`compaction-guard keys new`, and `npm start`'s development key), the private key file (mode
 * 0600, never overwritten), the public entry file, and a ring file that entries are added to.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { AUTHORITY_ROLES, type AuthorityRole } from '../engine/authority';
import { ConfigError } from '../config/settings';
import { createKeyFile, isMissing, readKeyFile, replaceKeyFile } from './keyFileAccess';
import { parseKeyRing, type RingEntry, type RingFile } from './ring';
import { type SigningKey, publicKeyOf, signingKeyText } from './signing';

/** A name is also a file name (`NAME.key`): letters, digits and `._@-`, not starting with a dot. */
const NAME = /^[A-Za-z0-9_@-][A-Za-z0-9._@-]{0,127}$/;

export function checkKeyName(name: string): string {
  if (!NAME.test(name))
    throw new ConfigError(
      `--name: expected 1 to 128 letters, digits or . _ @ - (not starting with a dot; it names the key files), got ${JSON.stringify(name)}`,
    );
  return name;
}

/** `ACKNOWLEDGE,SPILL` → the roles, each once; anything else is a ConfigError naming the flag. */
export function parseRoles(text: string): AuthorityRole[] {
  const roles = text
    .split(',')
    .map((r) => r.trim().toUpperCase())
    .filter(Boolean);
  const unknown = roles.filter((r) => !AUTHORITY_ROLES.includes(r as AuthorityRole));
  if (roles.length === 0 || unknown.length > 0)
    throw new ConfigError(
      `--roles: expected ${AUTHORITY_ROLES.join(', ')} or both (comma-separated), got ${JSON.stringify(text)}`,
    );
  return [...new Set(roles as AuthorityRole[])];
}

/**
 * The keyId of a public key: the first 16 hex digits of the SHA-256 of its 32 raw bytes. Derived
 * from the key, so two keys never share one by accident, and a rotated key (same name) gets a new one.
 */
export function keyIdOf(publicKey: string): string {
  return createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex').slice(0, 16);
}

export interface NewKey {
  key: SigningKey;
  entry: RingEntry;
}

/** A fresh Ed25519 key and its ring entry. */
export function newKey(name: string, roles: readonly AuthorityRole[]): NewKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const provisional: SigningKey = { keyId: '', name: checkKeyName(name), privateKey };
  const publicKey = publicKeyOf(provisional);
  const keyId = keyIdOf(publicKey);
  return {
    key: { ...provisional, keyId },
    entry: { keyId, name, publicKey, roles: [...roles] },
  };
}

/**
 * The ring as its file holds it (entries as written), or an empty one when `file` does not
 * exist. A ring that is not this user's (or root's), or that others can write, is refused
 * (src/authority/keyFileAccess.ts): a key added to it would be trusted by a ring anyone may edit.
 */
export function readRingFile(file: string): RingFile {
  let text: string;
  try {
    text = readKeyFile(file, 'trusted key ring');
  } catch (e) {
    if (isMissing(e)) return { keys: [] };
    throw e;
  }
  parseKeyRing(text, file); // a ring that does not read is not added to
  return JSON.parse(text) as RingFile;
}

/** Why `entry` cannot join `ring` (the same keyId, or the same name: `by` defaults to it), or null. */
export function ringConflict(ring: RingFile, entry: RingEntry, file: string): string | null {
  const sameId = ring.keys.find((k) => k.keyId === entry.keyId);
  if (sameId) return `${file} already has keyId ${entry.keyId} (named ${sameId.name})`;
  const sameName = ring.keys.find((k) => k.name === entry.name);
  if (sameName)
    return (
      `${file} already has a key named ${entry.name} (keyId ${sameName.keyId}): choose another --name, ` +
      'or remove that entry first to rotate it'
    );
  return null;
}

/**
 * Writes `text` to `file` through a temporary file of a random name, created exclusively without
 * following a link, synced, then renamed: a reader sees the old file or the new one, and nothing
 * planted at a guessable name is written through (src/authority/keyFileAccess.ts).
 */
export function writeAtomically(file: string, text: string, mode: number): void {
  replaceKeyFile(file, text, mode);
}

/** Adds `entry` to the ring file (created if absent). Throws ConfigError on a conflict. */
export function addToRing(file: string, entry: RingEntry): void {
  const ring = readRingFile(file);
  const conflict = ringConflict(ring, entry, file);
  if (conflict !== null) throw new ConfigError(conflict);
  const text = JSON.stringify({ ...ring, keys: [...ring.keys, entry] }, null, 2) + '\n';
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeAtomically(file, text, 0o644);
}

export interface KeyFiles {
  /** `DIR/NAME.key`: the private key (mode 0600). */
  keyFile: string;
  /** `DIR/NAME.pub.json`: the ring entry. */
  entryFile: string;
}

export function keyFilesOf(dir: string, name: string): KeyFiles {
  return {
    keyFile: path.join(dir, `${name}.key`),
    entryFile: path.join(dir, `${name}.pub.json`),
  };
}

/** Writes the key's two files; refuses to replace either (a key file lost is a key lost). */
export function writeKeyFiles(dir: string, k: NewKey): KeyFiles {
  const files = keyFilesOf(dir, k.key.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of [files.keyFile, files.entryFile])
    if (existsSync(file))
      throw new ConfigError(`${file} already exists: choose another --name or --out`);
  const create = (file: string, text: string, mode: number) => {
    try {
      createKeyFile(file, text, mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST')
        throw new ConfigError(`${file} already exists: choose another --name or --out`);
      throw new ConfigError(
        `cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
  };
  create(files.keyFile, signingKeyText(k.key), 0o600);
  create(files.entryFile, JSON.stringify(k.entry, null, 2) + '\n', 0o644);
  return files;
}

/**
 * A directory for private keys that only this user can enter: created 0700, and refused when it
 * is not a directory of this user's or others can write it (someone else could swap the keys).
 */
export function privateDirectory(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0)
    throw new ConfigError(
      `${dir}: expected a directory of this user's that others cannot write (for private keys)`,
    );
  return dir;
}
