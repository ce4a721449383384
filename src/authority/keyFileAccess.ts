/**
 * How the key files of contract §4b are read and written (docs/decisions.md 158, 159). The ring
 * says who may write off a loss; a signing key is what signs it: whoever can change the one or
 * read the other can do that too.
 *
 * - Reads open the file once and check the file opened (fstat on its descriptor, so nothing can
 *   be swapped between a check and the open): a regular file, owned by this user or by root,
 *   writable by no one else; a signing key also readable by no one else. A refusal names the
 *   file, what is wrong and the command that fixes it.
 * - Writes go through a temporary file of a random name in the target's directory, created
 *   exclusively and without following a symbolic link (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600),
 *   written, given its mode, synced, then renamed over the target (the ring) or linked to a name
 *   that must not exist (a new key file), so no one can plant a file or a link for it to write
 *   through, and a reader sees the old file or the whole new one.
 */
import { randomBytes } from 'node:crypto';
import {
  type Stats,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/settings';

/** What a key file is, as messages name it. */
export type KeyFileKind = 'trusted key ring' | 'signing key';

/** Why a key file with these attributes must not be used, and the command that fixes it. */
export interface KeyFileProblem {
  what: string;
  fix: string;
}

const modeText = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/** A path as a shell word: as is when it is plain, else single-quoted. */
function shellWord(file: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}

/**
 * Why the key file `file` with these attributes must not be used, or null. `uid`: this process's
 * user (undefined where there is none, as on Windows: no owner check). Root's files are accepted
 * as this user's own (root can rewrite any file anyway; as OpenSSH's StrictModes); when this
 * process is root, only root's. Pure, for the unit test.
 */
export function keyFileProblem(
  st: Pick<Stats, 'uid' | 'mode' | 'isFile'>,
  uid: number | undefined,
  kind: KeyFileKind,
  file: string,
): KeyFileProblem | null {
  const f = shellWord(file);
  if (!st.isFile())
    return { what: 'it is not a regular file', fix: `give the path of the ${kind} file itself` };
  if (uid !== undefined && st.uid !== uid && st.uid !== 0)
    return {
      what: `it is owned by uid ${st.uid}, not by you (uid ${uid}) or root, so its owner can change it`,
      fix: `make it yours: chown ${uid} ${f} (as root), or use a copy of your own`,
    };
  const mode = modeText(st.mode);
  if (kind === 'signing key' && (st.mode & 0o077) !== 0)
    return {
      what: `it is ${(st.mode & 0o022) !== 0 ? 'writable' : 'readable'} by group or others (mode ${mode}): a private key must be yours alone`,
      fix: `chmod 600 ${f}`,
    };
  if ((st.mode & 0o022) !== 0)
    return {
      what: `it is writable by group or others (mode ${mode}), so they could add a key to it`,
      fix: `chmod go-w ${f}`,
    };
  return null;
}

/**
 * The text of a key file, after the checks of `keyFileProblem` on the file opened. Throws
 * ConfigError when it cannot be opened or read (`code` of the error kept on `cause` for callers
 * that treat ENOENT apart) or is refused.
 */
export function readKeyFile(file: string, kind: KeyFileKind): string {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted at the path would block the open; it is refused below instead.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(`${kind} ${file} cannot be read (${code ?? (e as Error).message})`, {
      cause: e,
    });
  }
  try {
    const problem = keyFileProblem(fstatSync(fd), process.getuid?.(), kind, file);
    if (problem !== null)
      throw new ConfigError(`${kind} ${file} is refused: ${problem.what}. Fix: ${problem.fix}`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Was this error of `readKeyFile` a file that does not exist? */
export function isMissing(e: unknown): boolean {
  return (e as { cause?: NodeJS.ErrnoException }).cause?.code === 'ENOENT';
}

/**
 * A new temporary file beside `file`, written with `text` and synced; returns its path.
 * Exclusive and no-follow: a file or a symbolic link already at the name fails the open. Its
 * mode: `keep` when given (the bits of the file it replaces), else `mode` under the umask, as a
 * plain create would have it (0600 for a private key).
 */
function writeTemporary(file: string, text: string, mode: number, keep: number | null): string {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(8).toString('hex')}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fd = openSync(tmp, flags, keep === null ? mode : 0o600);
  try {
    writeFileSync(fd, text);
    if (keep !== null) fchmodSync(fd, keep);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  return tmp;
}

/** The permission bits of the regular file at `file` less group and other write, or null. */
function existingMode(file: string): number | null {
  try {
    const st = lstatSync(file);
    return st.isFile() ? st.mode & 0o755 : null;
  } catch {
    return null;
  }
}

/** Syncs a directory, so a rename or link in it survives a crash (best effort). */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // Some file systems cannot sync a directory: the file itself is synced already.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes `text` to `file`, replacing it whole: a reader sees the old file or the new one. A file
 * replaced keeps its permission bits (less write for group and others); a new one gets `mode`
 * under the umask.
 */
export function replaceKeyFile(file: string, text: string, mode: number): void {
  const tmp = writeTemporary(file, text, mode, existingMode(file));
  try {
    renameSync(tmp, file);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
  syncDirectory(path.dirname(path.resolve(file)));
}

/**
 * Writes `text` to `file`, which must not exist (EEXIST otherwise, a symbolic link included):
 * it appears whole or not at all.
 */
export function createKeyFile(file: string, text: string, mode: number): void {
  const tmp = writeTemporary(file, text, mode, null);
  try {
    linkSync(tmp, file);
  } finally {
    unlinkSync(tmp);
  }
  syncDirectory(path.dirname(path.resolve(file)));
}
