/**
 * `npm start`'s development keys: with embedded services and no ring of its own, the processor
 * makes a fresh key with both roles and a ring holding only it, so the README's demo (`simulate`,
 * `acknowledge`, the examples) signs with no setup, and nothing unsigned is ever accepted. Made
 * again at every start (the embedded Kafka starts empty too): a key left from an earlier run
 * authorizes nothing.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { AUTHORITY_ROLES } from '../engine/authority';
import { keyFilesOf, newKey, privateDirectory, writeAtomically, writeKeyFiles } from './keyFiles';

export const DEVELOPMENT_KEY_NAME = 'development';

export interface DevelopmentKeys {
  /** The ring file (CG_TRUSTED_KEYS_FILE of the processor). */
  trustedKeysFile: string;
  /** The private key (what `acknowledge` and the client use against `npm start`). */
  signingKeyFile: string;
  keyId: string;
}

/** A fresh development key and ring under `dir` (0700), replacing any earlier ones. */
export function createDevelopmentKeys(dir: string): DevelopmentKeys {
  privateDirectory(dir);
  const files = keyFilesOf(dir, DEVELOPMENT_KEY_NAME);
  const trustedKeysFile = path.join(dir, 'ring.json');
  for (const f of [files.keyFile, files.entryFile]) rmSync(f, { force: true });
  const k = newKey(DEVELOPMENT_KEY_NAME, AUTHORITY_ROLES);
  writeKeyFiles(dir, k);
  writeAtomically(trustedKeysFile, JSON.stringify({ keys: [k.entry] }, null, 2) + '\n', 0o644);
  return { trustedKeysFile, signingKeyFile: files.keyFile, keyId: k.key.keyId };
}
