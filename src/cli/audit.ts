/**
 * `compaction-guard audit FILE... [--json]`: stream JSON-lines files through the engine
 * (contract §7), in the order given, as one stream of events (as `cat FILE... | audit -`).
 */
import { createHash } from 'node:crypto';
import { errorClass } from '../errors';
import { open } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import {
  MAX_SHOWN_LINE_BYTES,
  type OverlongLine,
  Replay,
  type AuditLineRecord,
} from '../audit/replay';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../kafka/recordLimits';
import { ReportBuilder } from '../audit/report';

export interface AuditOptions {
  json: boolean;
  /**
   * The input topic's `max.message.bytes` (CG_INPUT_MAX_MESSAGE_BYTES, `--max-message-bytes`): a
   * longer line is a dead letter (TOO_LONG), as no producer could write it as one record.
   * Default: Kafka's.
   */
  maxLineBytes?: number;
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
const CR_BYTE = Buffer.from([CR]);

export type { OverlongLine };

/** A line of the input: its bytes, or, when it is longer than the limit, what is kept of it. */
export type InputLine = Buffer | OverlongLine;

/** Counts and hashes a line past the limit, keeping none of it but a copy of its head. */
class OverlongCounter {
  private readonly hash = createHash('sha256');
  private length = 0;
  /** A `\r` that ended the last part: part of the line only if the line goes on past it. */
  private cr = false;
  private readonly head: Buffer[] = [];
  private headLength = 0;

  add(part: Buffer): void {
    if (part.length === 0) return;
    if (this.cr) {
      this.take(CR_BYTE);
      this.cr = false;
    }
    if (part[part.length - 1] === CR) {
      this.cr = true;
      part = part.subarray(0, -1);
    }
    this.take(part);
  }

  private take(bytes: Buffer): void {
    this.hash.update(bytes);
    this.length += bytes.length;
    if (this.headLength < MAX_SHOWN_LINE_BYTES) {
      const copy = Buffer.from(bytes.subarray(0, MAX_SHOWN_LINE_BYTES - this.headLength));
      this.head.push(copy);
      this.headLength += copy.length;
    }
  }

  /** The line ended (a `\r` just before its end is not part of it). */
  done(): OverlongLine {
    const head = Buffer.concat(this.head, this.headLength);
    return { length: this.length, sha256: this.hash.digest('hex'), head };
  }
}

/**
 * Splits bytes into lines in one pass: each byte is looked at once and copied at most once, so a
 * line of any length costs time in proportion to it (decisions 156). A line is held only while it
 * is within `maxLineBytes` (one byte more for a `\r`); past that it is counted and hashed.
 */
export class LineSplitter {
  /** The current line's parts, `held` bytes in all (at most `maxLineBytes + 1`). */
  private parts: Buffer[] = [];
  private held = 0;
  private overlong: OverlongCounter | null = null;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines that `data` ends; the rest of it starts the next line. */
  *push(data: Buffer): Generator<InputLine> {
    let start = 0;
    for (let i = data.indexOf(NEWLINE); i >= 0; i = data.indexOf(NEWLINE, start)) {
      this.add(data.subarray(start, i));
      yield this.end();
      start = i + 1;
    }
    this.add(data.subarray(start));
  }

  /** The last line, when the input does not end with `\n`. */
  *finish(): Generator<InputLine> {
    if (this.held > 0 || this.overlong !== null) yield this.end();
  }

  private add(part: Buffer): void {
    if (part.length === 0) return;
    if (this.overlong !== null) return this.overlong.add(part);
    if (this.held + part.length <= this.maxLineBytes + 1) {
      this.parts.push(part);
      this.held += part.length;
      return;
    }
    // Too long even without a `\r`: from here on only counted and hashed.
    this.parts.push(part);
    this.overlong = new OverlongCounter();
    for (const p of this.parts) this.overlong.add(p);
    this.parts = [];
    this.held = 0;
  }

  private end(): InputLine {
    if (this.overlong !== null) {
      const line = this.overlong.done();
      this.overlong = null;
      return line;
    }
    const whole = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    const line = withoutCr(whole);
    if (line.length <= this.maxLineBytes) return line;
    const head = Buffer.from(line.subarray(0, MAX_SHOWN_LINE_BYTES));
    return { length: line.length, sha256: createHash('sha256').update(line).digest('hex'), head };
  }
}

/**
 * The lines of one input (a line's bytes are decoded as a Kafka record's are, so invalid UTF-8 is
 * seen, not replaced). `\n` ends a line, a `\r` before it is dropped, and a UTF-8 byte-order mark
 * at the start of the input is skipped (contract §7). A line longer than `maxLineBytes` comes as
 * an OverlongLine, never held whole.
 */
export async function* linesOf(
  stream: Readable,
  maxLineBytes = DEFAULT_MAX_MESSAGE_BYTES,
): AsyncGenerator<InputLine> {
  const lines = new LineSplitter(maxLineBytes);
  /** The input's first bytes, until whether they start with a byte-order mark can be told. */
  let start: Buffer | null = Buffer.alloc(0);
  for await (const chunk of stream) {
    let data: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    if (start !== null) {
      if (start.length > 0) data = Buffer.concat([start, data]);
      if (data.length < BOM.length && BOM.subarray(0, data.length).equals(data)) {
        start = data; // too short to tell yet
        continue;
      }
      if (data.subarray(0, BOM.length).equals(BOM)) data = data.subarray(BOM.length);
      start = null;
    }
    yield* lines.push(data);
  }
  if (start !== null) yield* lines.push(start);
  yield* lines.finish();
}

/** `linesOf`, with a failed read (EISDIR, EIO...) as an InputError naming the input. */
async function* readableLines(input: AuditInput, maxLineBytes: number): AsyncGenerator<InputLine> {
  try {
    yield* linesOf(input.stream, maxLineBytes);
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
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  // A closed stdout (EPIPE) emits 'error'; without a listener it would crash the process.
  let closed = false;
  const onError = () => {
    closed = true;
  };
  out.on('error', onError);
  try {
    for (const input of list) {
      let lineNumber = 0;
      for await (const line of readableLines(input, maxLineBytes)) {
        lineNumber++;
        const records = Buffer.isBuffer(line)
          ? replay.lineBytes(line, lineNumber)
          : replay.overlong(line, lineNumber, maxLineBytes);
        for (const record of records) {
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
