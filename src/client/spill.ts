/**
 * The spill side of the loop (contract §5, §6): on REFUSE with action SPILL the orchestrator
 * writes the requested range of the transcript to durable storage, losslessly, and answers with
 * a SpillCompleted naming a handle from which it can be read back.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Unit } from '../engine/events';
import { SpillIntegrityError } from './errors';

/** What is to be spilled: one session's transcript over `range` (in `unit`). */
export interface SpillWrite {
  sessionId: string;
  spillRequestId: string;
  unit: Unit;
  range: { start: number; end: number };
  /** The transcript bytes covering `range`, exactly as they are to be read back. */
  content: Uint8Array;
}

/** Durable, verifiable storage for spills. */
export interface SpillStore {
  /** Stores `content` durably and returns a URI from which `read` gets the same bytes. */
  write(spill: SpillWrite): Promise<string>;
  /** The bytes behind `handle`; throws SpillIntegrityError if they are not what was written. */
  read(handle: string): Promise<Buffer>;
  /** How errors name this store (its directory, its bucket); default: its class name. */
  readonly name?: string;
}

/** The store as an error names it. */
export function spillStoreName(store: SpillStore): string {
  return (
    store.name ?? (store.constructor.name !== 'Object' ? store.constructor.name : 'SpillStore')
  );
}

export interface FileSpillStoreOptions {
  /**
   * The largest spill `read` loads (bytes): a handle naming a bigger file is refused before it
   * is read, so a hostile or damaged handle cannot make the reader load a huge file.
   */
  maxReadBytes?: number;
}

/** 256 MiB: far above a transcript range (a million-token context is a few MiB of text). */
export const DEFAULT_MAX_SPILL_READ_BYTES = 256 * 1024 * 1024;

const SHA_PARAM = 'sha256';
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** How much of a hostile handle an error message quotes. */
const QUOTED_HANDLE_CHARS = 200;

function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The file name of a free-text id: the hex sha256 of its UTF-8 bytes. Fixed length, hex digits
 * only, so no id can name `..`, a separator, a NUL or an over-long name, and two ids share a
 * name only if they collide under sha256.
 */
export function spillFileName(id: string): string {
  return sha256(id);
}

function quoted(handle: string): string {
  return JSON.stringify(
    handle.length > QUOTED_HANDLE_CHARS ? `${handle.slice(0, QUOTED_HANDLE_CHARS)}…` : handle,
  );
}

/** fsync of a directory: makes the entries created or renamed in it durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * `dir` and any missing parents, mode 0700; the parent of each directory created is fsynced,
 * so a crash cannot lose the entry of a directory a durable file lives in.
 */
async function ensureDir(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (first === undefined) return;
  const created: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    created.push(d);
    if (d === first || d === path.dirname(d)) break;
  }
  for (const d of created.reverse()) await syncDir(path.dirname(d));
}

/**
 * Spills as files under one root directory: `<root>/<sha256(sessionId)>/<sha256(spillRequestId)>.spill`
 * (mode 0600 in directories of mode 0700). Each is written to a temp file, fsynced, renamed into
 * place and its directory fsynced, so a crash leaves either no file or the whole one. The handle
 * is `file:///…/x.spill#sha256=<hex>`: a reader can tell a damaged or replaced file from the one
 * that was acknowledged. `read` opens only regular files inside the root (no symbolic links), up
 * to `maxReadBytes`.
 */
export class FileSpillStore implements SpillStore {
  readonly dir: string;
  readonly maxReadBytes: number;

  constructor(dir: string, options: FileSpillStoreOptions = {}) {
    this.dir = path.resolve(dir);
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_MAX_SPILL_READ_BYTES;
    if (!Number.isSafeInteger(this.maxReadBytes) || this.maxReadBytes < 0)
      throw new RangeError(`FileSpillStore maxReadBytes: expected an integer ≥ 0`);
  }

  get name(): string {
    return `FileSpillStore(${this.dir})`;
  }

  /** Where the spill of `sessionId` / `spillRequestId` is stored. */
  fileOf(sessionId: string, spillRequestId: string): string {
    return path.join(this.dir, spillFileName(sessionId), `${spillFileName(spillRequestId)}.spill`);
  }

  async write(spill: SpillWrite): Promise<string> {
    const final = this.fileOf(spill.sessionId, spill.spillRequestId);
    const sessionDir = path.dirname(final);
    await ensureDir(sessionDir);
    const temp = path.join(sessionDir, `.${randomUUID()}.tmp`);
    const file = await open(temp, 'wx', FILE_MODE);
    try {
      await file.writeFile(spill.content);
      await file.sync();
    } catch (e) {
      await file.close();
      // The write's failure is the caller's answer; a temp file that stays behind is dot-named
      // and never read as a spill.
      await unlink(temp).catch(() => undefined);
      throw e;
    }
    await file.close();
    await rename(temp, final);
    await syncDir(sessionDir);
    const url = pathToFileURL(final);
    url.hash = `${SHA_PARAM}=${sha256(spill.content)}`;
    return url.href;
  }

  async read(handle: string): Promise<Buffer> {
    const { file, sha } = this.parseHandle(handle);
    await this.refuseLinks(file, handle);
    let bytes: Buffer;
    try {
      bytes = await this.readCapped(file, handle);
    } catch (e) {
      if (e instanceof SpillIntegrityError) throw e;
      throw new SpillIntegrityError(
        `spill handle ${quoted(handle)} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    // The file's own hash is not shown: a handle naming some other file must learn nothing of it.
    if (sha256(bytes) !== sha)
      throw new SpillIntegrityError(
        `spill handle ${quoted(handle)}: the content does not match the handle's sha256 (damaged or replaced)`,
      );
    return bytes;
  }

  /** The file a handle names, if it is a `file://` URI with a sha256 inside this store's root. */
  private parseHandle(handle: string): { file: string; sha: string } {
    let url: URL;
    try {
      url = new URL(handle);
    } catch {
      throw new SpillIntegrityError(`spill handle ${quoted(handle)} is not a URI`);
    }
    if (url.protocol !== 'file:')
      throw new SpillIntegrityError(`spill handle ${quoted(handle)}: expected a file:// URI`);
    const match = new RegExp(`^#${SHA_PARAM}=([0-9a-f]{64})$`).exec(url.hash);
    if (!match)
      throw new SpillIntegrityError(
        `spill handle ${quoted(handle)}: expected a #${SHA_PARAM}=<64 hex digits> fragment`,
      );
    url.hash = '';
    let file: string;
    try {
      if (url.search !== '' || (url.host !== '' && url.host !== 'localhost')) throw new Error();
      file = path.resolve(fileURLToPath(url));
    } catch {
      throw new SpillIntegrityError(`spill handle ${quoted(handle)}: not a local file path`);
    }
    const parts = path.relative(this.dir, file).split(path.sep);
    // <session dir>/<name>.spill: the layout write uses (and that of stores before hashed names).
    if (
      parts.length !== 2 ||
      parts.some((p) => p === '' || p === '.' || p === '..') ||
      !parts[1]!.endsWith('.spill')
    )
      throw new SpillIntegrityError(
        `spill handle ${quoted(handle)}: not a spill of this store (${this.dir})`,
      );
    return { file, sha: match[1]! };
  }

  /** The session directory and the file must be what they seem: no symbolic link leads out. */
  private async refuseLinks(file: string, handle: string): Promise<void> {
    for (const p of [path.dirname(file), file]) {
      // Nothing there is no link: the read that follows reports the missing file.
      const s = await lstat(p).catch(() => null);
      if (s?.isSymbolicLink())
        throw new SpillIntegrityError(
          `spill handle ${quoted(handle)}: ${path.relative(this.dir, p)} is a symbolic link in the store`,
        );
    }
  }

  private async readCapped(file: string, handle: string): Promise<Buffer> {
    const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const st = await fh.stat();
      if (!st.isFile())
        throw new SpillIntegrityError(`spill handle ${quoted(handle)}: not a regular file`);
      if (st.size > this.maxReadBytes)
        throw new SpillIntegrityError(
          `spill handle ${quoted(handle)}: ${st.size} bytes, more than this store reads (maxReadBytes ${this.maxReadBytes})`,
        );
      // One byte more than the size: a file that grows while it is read is refused, not cut.
      const buffer = Buffer.alloc(st.size + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await fh.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      if (length !== st.size)
        throw new SpillIntegrityError(`spill handle ${quoted(handle)}: changed while being read`);
      return buffer.subarray(0, length);
    } finally {
      await fh.close();
    }
  }
}
