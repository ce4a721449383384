/**
 * Which signing key a tool or the client uses (contract §4b): the one given (`--key`, or
 * CG_SIGNING_KEY_FILE), else, when it talks to a running `npm start`, that run's development
 * key (named in `.cache/embedded.json`), else none. A key file that is named but does not read
 * is a ConfigError, never "no key", and so is one that others could read or change
 * (src/authority/keyFileAccess.ts).
 */
import { toolSettings } from '../config/config';
import type { EmbeddedState } from '../services/embedded';
import { type SigningKey, loadSigningKey } from './signing';

export interface ConfiguredKey {
  key: SigningKey;
  /** Where it came from, for messages: the file, and whether it is `npm start`'s. */
  file: string;
  development: boolean;
}

export function configuredSigningKey(
  env: NodeJS.ProcessEnv,
  flags: Partial<Record<string, string | undefined>>,
  embedded: EmbeddedState | null,
): ConfiguredKey | null {
  const file = toolSettings(env, flags).signingKeyFile;
  if (file !== null) return { key: loadSigningKey(file), file, development: false };
  if (embedded?.signingKeyFile !== undefined)
    return {
      key: loadSigningKey(embedded.signingKeyFile),
      file: embedded.signingKeyFile,
      development: true,
    };
  return null;
}
