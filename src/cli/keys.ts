/**
 * `compaction-guard keys new`: a signing key for contract §4b. Writes the private key
 * (`DIR/NAME.key`, mode 0600: it is what `acknowledge --key`, GuardClient and SpillWorker sign
 * with) and its ring entry (`DIR/NAME.pub.json`), and with `--ring` adds the entry to the ring
 * file the processor reads (CG_TRUSTED_KEYS_FILE; created if absent). Nothing is written when
 * any part would fail (a bad name or role, a key file that exists, a keyId or name already in
 * the ring).
 */
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../config/config';
import {
  addToRing,
  newKey,
  parseRoles,
  readRingFile,
  ringConflict,
  writeKeyFiles,
} from '../authority/keyFiles';
import { TOOL_FAILURES, reportingFailures } from './failures';

export interface KeysNewOptions {
  name?: string;
  roles?: string;
  out?: string;
  ring?: string;
}

export function keysNew(o: KeysNewOptions, out: (line: string) => void): void {
  const required = (flag: string, v: string | undefined, what: string): string => {
    if (v === undefined || v.trim() === '')
      throw new ConfigError(`--${flag}: required (${what}); nothing was written`);
    return v;
  };
  const name = required('name', o.name, "the key's name: the default `by` of what it signs");
  const roles = parseRoles(required('roles', o.roles, 'ACKNOWLEDGE, SPILL or both'));
  const dir = required('out', o.out, 'the directory for NAME.key and NAME.pub.json');
  const k = newKey(name, roles);
  if (o.ring !== undefined) {
    const conflict = ringConflict(readRingFile(o.ring), k.entry, o.ring);
    if (conflict !== null) throw new ConfigError(`${conflict}; nothing was written`);
    requireWritable(o.ring);
  }
  const files = writeKeyFiles(dir, k);
  out(
    `private key: ${files.keyFile} (mode 0600; keep it secret, give it as --key or CG_SIGNING_KEY_FILE)`,
  );
  out(`ring entry:  ${files.entryFile} (keyId ${k.entry.keyId}, roles ${roles.join(',')})`);
  if (o.ring !== undefined) {
    addToRing(o.ring, k.entry);
    out(
      `added to ${o.ring}: a running processor with CG_TRUSTED_KEYS_FILE=${o.ring} trusts it after SIGHUP (kill -HUP <pid>)`,
    );
  } else {
    out(
      'to trust it, add the entry to the "keys" of the ring file (CG_TRUSTED_KEYS_FILE), or run again with --ring',
    );
  }
}

/**
 * The ring file (or, when it does not exist yet, the nearest directory it would be created in)
 * can be written: checked before any key file is, so a refusal leaves nothing behind.
 */
function requireWritable(ring: string): void {
  let target = path.resolve(ring);
  while (!existsSync(target)) target = path.dirname(target);
  try {
    accessSync(target, constants.W_OK);
  } catch (e) {
    throw new ConfigError(
      `--ring: cannot write ${target} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); nothing was written`,
    );
  }
}

export function keysCommand(): Command {
  const keys = new Command('keys').description(
    'Signing keys of the trusted key ring (contract §4b): who may write off a loss (ACKNOWLEDGE) or answer a spill request (SPILL).',
  );
  keys
    .command('new')
    .description(
      'Make an Ed25519 signing key: DIR/NAME.key (PKCS#8 PEM with keyId and name lines, mode 0600) and DIR/NAME.pub.json (its ring entry).',
    )
    .option(
      '--name <name>',
      "the key's name: letters, digits, . _ @ - (required; the default `by` of acknowledge)",
    )
    .option('--roles <roles>', 'ACKNOWLEDGE, SPILL, or ACKNOWLEDGE,SPILL (required)')
    .option(
      '--out <dir>',
      'the directory to write the two files to (required; created 0700 if absent)',
    )
    .option(
      '--ring <file>',
      'also add the entry to this ring file (created if absent; a keyId or name already in it is refused)',
    )
    .addHelpText(
      'after',
      '\nRotate: make a new key, add it, SIGHUP the processor, move the signers to it, then remove the old entry and SIGHUP again.' +
        '\nRevoke: remove the entry from the ring file and SIGHUP the processor (kill -HUP <pid>).' +
        '\nExit status: 0 written; 2 invalid options, a file that exists, or a conflict with the ring (nothing written).',
    )
    .action(async (o: KeysNewOptions) => {
      await reportingFailures('keys new', TOOL_FAILURES, async () =>
        keysNew(o, (l) => process.stdout.write(l + '\n')),
      );
    });
  return keys;
}
