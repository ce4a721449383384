/**
 * `compaction-guard audit FILE... [--json]`: stream JSON-lines files through the engine
 * (contract §7), in the order given, as one stream of events (as `cat FILE... | audit -`).
 */
import { errorClass } from '../errors';
import { open } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { Replay, type AuditLineRecord } from '../audit/replay';
import { ReportBuilder } from '../audit/report';

export interface AuditOptions {
  json: boolean;
}

/** One input: its name as given (`-` for stdin) and its bytes. */
export interface AuditInput {
  name: string;
  stream: Readable;
}

/** An input that cannot be opened or read (the only non-zero exit, contract §7). */
export class InputError extends errorClass('INPUT_UNREADABLE') {}

/**
 * Opens every input before any is read, so a bad name fails at once with nothing written. A
 * directory opens on Linux but cannot be read: it is refused here, like a missing file.
 */
export async function openInputs(files: readonly string[], stdin: Readable): Promise<AuditInput[]> {
  const inputs: AuditInput[] = [];
  try {
    for (const name of files) {
      if (name === '-') {
        inputs.push({ name, stream: stdin });
        continue;
      }
      let handle;
      try {
        handle = await open(name, 'r');
      } catch (e) {
        throw new InputError(`cannot open ${name}: ${reason(e)}`);
      }
      if ((await handle.stat()).isDirectory()) {
        await handle.close();
        throw new InputError(`cannot read ${name}: it is a directory, not a JSON-lines file`);
      }
      inputs.push({ name, stream: handle.createReadStream() });
    }
  } catch (e) {
    for (const input of inputs) if (input.stream !== stdin) input.stream.destroy();
    throw e;
  }
  return inputs;
}

function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'ENOENT') return 'no such file';
  if (err.code === 'EACCES') return 'permission denied';
  return err.code ?? err.message;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * The lines of one input as bytes (a line's bytes are decoded as a Kafka record's are, so
 * invalid UTF-8 is seen, not replaced). `\n` ends a line, a `\r` before it is dropped, and a
 * UTF-8 byte-order mark at the start of the input is skipped (contract §7).
 */
export async function* linesOf(stream: Readable): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  let first = true;
  for await (const chunk of stream) {
    let data = Buffer.concat([rest, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
    if (first) {
      if (data.length < BOM.length && BOM.subarray(0, data.length).equals(data)) {
        rest = data; // too short to tell yet
        continue;
      }
      if (data.subarray(0, BOM.length).equals(BOM)) data = data.subarray(BOM.length);
      first = false;
    }
    let start = 0;
    for (let i = data.indexOf(NEWLINE); i >= 0; i = data.indexOf(NEWLINE, start)) {
      yield withoutCr(data.subarray(start, i));
      start = i + 1;
    }
    rest = data.subarray(start);
  }
  if (rest.length > 0) yield withoutCr(rest);
}

/** `linesOf`, with a failed read (EISDIR, EIO...) as an InputError naming the input. */
async function* readableLines(input: AuditInput): AsyncGenerator<Buffer> {
  try {
    yield* linesOf(input.stream);
  } catch (e) {
    throw new InputError(`cannot read ${input.name}: ${reason(e)}`);
  }
}

function withoutCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, -1) : line;
}

/** The reader went away (`audit ... | head`): stop quietly, as command-line tools do. */
class OutputClosed extends Error {}

async function write(out: Writable, text: string): Promise<void> {
  if (out.destroyed || out.writableEnded) throw new OutputClosed();
  let flushed: boolean;
  try {
    flushed = out.write(text);
  } catch (e) {
    // A pipe's writes are synchronous: a closed reader throws EPIPE here.
    if ((e as NodeJS.ErrnoException).code === 'EPIPE') throw new OutputClosed();
    throw e;
  }
  if (!flushed) await drained(out);
}

/** Resolves on 'drain'; rejects with OutputClosed when the stream errs or closes first. */
function drained(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (closed: boolean) => {
      out.off('drain', onDrain);
      out.off('error', onClosed);
      out.off('close', onClosed);
      if (closed) reject(new OutputClosed());
      else resolve();
    };
    const onDrain = () => settle(false);
    const onClosed = () => settle(true);
    out.on('drain', onDrain);
    out.on('error', onClosed);
    out.on('close', onClosed);
  });
}

/**
 * Streams: memory grows with sessions, never with the files' size. Rejects with InputError
 * when an input cannot be read to its end.
 */
export async function runAudit(
  inputs: Readable | readonly AuditInput[],
  out: Writable,
  options: AuditOptions,
  /** The engine's sessions (bench/audit.ts measures the alternatives). */
  replay: Replay = new Replay(),
): Promise<void> {
  const list = Array.isArray(inputs)
    ? (inputs as readonly AuditInput[])
    : [{ name: '-', stream: inputs as Readable }];
  const report = new ReportBuilder();
  const several = list.length > 1;
  // A closed stdout (EPIPE) emits 'error'; without a listener it would crash the process.
  let closed = false;
  const onError = () => {
    closed = true;
  };
  out.on('error', onError);
  try {
    for (const input of list) {
      let lineNumber = 0;
      for await (const line of readableLines(input)) {
        lineNumber++;
        for (const record of replay.lineBytes(line, lineNumber)) {
          const shown: AuditLineRecord =
            several && record.record === 'dead-letter' ? { ...record, file: input.name } : record;
          if (options.json) await write(out, JSON.stringify(shown) + '\n');
          else report.add(shown);
          if (closed) throw new OutputClosed();
        }
      }
    }
    if (!options.json) await write(out, report.render());
  } catch (e) {
    if (!(e instanceof OutputClosed)) throw e;
  } finally {
    out.off('error', onError);
    for (const input of list) input.stream.destroy();
  }
}
