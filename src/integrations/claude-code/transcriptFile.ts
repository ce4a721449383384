/** The transcript file's bytes: what was appended since an offset, and single lines by range. */
import { open } from 'node:fs/promises';
import { HookStateError } from './ledger';
import type { LineRange } from './transcript';

/** The file from `offset` to its end (empty when it does not exist yet: a new session). */
export async function readFrom(file: string, offset: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && offset === 0) return Buffer.alloc(0);
    throw e;
  }
  try {
    const { size } = await handle.stat();
    if (size < offset)
      throw new HookStateError(
        `${file}: ${size} bytes, but ${offset} were read already: the transcript was truncated or replaced, so its turns cannot be followed`,
      );
    const buffer = Buffer.alloc(size - offset);
    let read = 0;
    while (read < buffer.length) {
      const { bytesRead } = await handle.read(buffer, read, buffer.length - read, offset + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/** The bytes of each range (undefined where none is given or the file is too short). */
export async function readRanges(
  file: string,
  ranges: readonly (LineRange | undefined)[],
): Promise<(Buffer | undefined)[]> {
  const handle = await open(file, 'r');
  try {
    const out: (Buffer | undefined)[] = [];
    for (const r of ranges) {
      if (r === undefined) {
        out.push(undefined);
        continue;
      }
      const buffer = Buffer.alloc(r.end - r.start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, r.start);
      out.push(bytesRead === buffer.length ? buffer : undefined);
    }
    return out;
  } finally {
    await handle.close();
  }
}
