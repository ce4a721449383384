/**
 * The spill side of the loop (contract §5, §6): on REFUSE with action SPILL the orchestrator
 * writes the requested range of the transcript to durable storage, losslessly, and answers with
 * a SpillCompleted naming a handle from which it can be read back.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
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
}

const SHA_PARAM = 'sha256';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Keeps a file name to letters, digits and `._-` (session and request ids are free text). */
function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * Spills as files under one directory: `<dir>/<sessionId>/<spillRequestId>.spill`, written to a
 * temp file, fsynced, renamed into place and the directory fsynced, so a crash leaves either no
 * file or the whole one. The handle is `file:///…/x.spill#sha256=<hex>`: a reader can tell a
 * damaged or replaced file from the one that was acknowledged.
 */
export class FileSpillStore implements SpillStore {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  async write(spill: SpillWrite): Promise<string> {
    const sessionDir = path.join(this.dir, safeName(spill.sessionId));
    await mkdir(sessionDir, { recursive: true });
    const final = path.join(sessionDir, `${safeName(spill.spillRequestId)}.spill`);
    const temp = path.join(sessionDir, `.${randomUUID()}.tmp`);
    const file = await open(temp, 'wx');
    try {
      await file.writeFile(spill.content);
      await file.sync();
    } catch (e) {
      await file.close();
      await unlink(temp).catch(() => undefined);
      throw e;
    }
    await file.close();
    await rename(temp, final);
    const dirHandle = await open(sessionDir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
    const url = pathToFileURL(final);
    url.hash = `${SHA_PARAM}=${sha256(spill.content)}`;
    return url.href;
  }

  async read(handle: string): Promise<Buffer> {
    let url: URL;
    try {
      url = new URL(handle);
    } catch {
      throw new SpillIntegrityError(`spill handle ${JSON.stringify(handle)} is not a URI`);
    }
    if (url.protocol !== 'file:')
      throw new SpillIntegrityError(
        `spill handle ${JSON.stringify(handle)}: expected a file:// URI`,
      );
    const match = new RegExp(`^#${SHA_PARAM}=([0-9a-f]{64})$`).exec(url.hash);
    if (!match)
      throw new SpillIntegrityError(
        `spill handle ${JSON.stringify(handle)}: expected a #${SHA_PARAM}=<64 hex digits> fragment`,
      );
    url.hash = '';
    const file = fileURLToPath(url);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (e) {
      throw new SpillIntegrityError(
        `spill ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    const actual = sha256(bytes);
    if (actual !== match[1])
      throw new SpillIntegrityError(
        `spill ${file}: sha256 ${actual} does not match the handle's ${match[1]} (damaged or replaced)`,
      );
    return bytes;
  }
}
