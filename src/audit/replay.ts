/**
 * The offline form (contract §7): JSON lines through the same engine, in file order. Pure per
 * line: a line in, the records it produces out. `decidedAt` is the request's occurredAt, so a
 * replay is byte-identical (a malformed request whose occurredAt did not decode: 0).
 */
import { createHash } from 'node:crypto';
import type { EngineInput, Output } from '../engine';
import type { EngineOptions } from '../engine/evolve';
import { evolveInPlace } from '../engine/step';
import { Fleet, engineOptions } from '../engine/fleet';
import { type DecodeResult, decodeEventBytes, decodeEventLine } from '../schema/decodeEvent';

export interface DeadLetterRecord {
  record: 'dead-letter';
  /** Only when several files are replayed together: which one (as given). */
  file?: string;
  lineNumber: number;
  error: string;
  /** The line as text, or its first `MAX_SHOWN_LINE_BYTES` bytes when it is longer. */
  line: string;
  /**
   * Only when `line` is cut, and on every TOO_LONG line: the whole line's length in bytes
   * (without a `\r` before its `\n`).
   */
  lineBytes?: number;
  /** With `lineBytes`: the sha256 of the whole line's bytes, in hex. */
  lineSha256?: string;
}

/**
 * How much of a bad line its dead letter shows, in bytes of the line (decisions 156): a dead
 * letter that echoed a 10 MB line whole would be a 10 to 60 MB record (JSON escapes a control
 * byte as six characters). A longer line is cut at a character boundary, and its length and
 * sha256 say which line it was, as a processor's dead letter cut to fit its topic does.
 */
export const MAX_SHOWN_LINE_BYTES = 4096;

/** What a dead letter shows of a line held whole: all of it, or its head and what identifies it. */
function shownLine(bytes: Buffer): Pick<DeadLetterRecord, 'line' | 'lineBytes' | 'lineSha256'> {
  if (bytes.length <= MAX_SHOWN_LINE_BYTES) return { line: bytes.toString('utf8') };
  return cutLine(bytes.subarray(0, MAX_SHOWN_LINE_BYTES), bytes.length, sha256(bytes));
}

function cutLine(
  head: Buffer,
  lineBytes: number,
  lineSha256: string,
): Pick<DeadLetterRecord, 'line' | 'lineBytes' | 'lineSha256'> {
  const shown = head.subarray(0, MAX_SHOWN_LINE_BYTES);
  const end = lineBytes > shown.length ? wholeCharacters(shown) : shown.length;
  return { line: head.subarray(0, end).toString('utf8'), lineBytes, lineSha256 };
}

/**
 * The length of `head`'s longest prefix that does not end in part of a character: a character
 * whose lead byte says it has more bytes than are left is dropped whole.
 */
function wholeCharacters(head: Buffer): number {
  let i = head.length - 1;
  // Back over up to three continuation bytes (0b10xxxxxx) to the character's lead byte.
  while (i >= 0 && head.length - i <= 3 && (head[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return head.length;
  const lead = head[i]!;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return head.length - i < size ? i : head.length;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * A line longer than the limit (the input topic's `max.message.bytes`) as the line splitter
 * keeps it (src/cli/audit.ts): never held whole, only its length and sha256 (of its bytes
 * without the `\r` before its `\n`) and a copy of its first bytes (decisions 156).
 */
export interface OverlongLine {
  length: number;
  sha256: string;
  /** Its first `MAX_SHOWN_LINE_BYTES` bytes. */
  head: Buffer;
}

export type AuditLineRecord =
  | ({ record: 'verdict' } & Extract<Output, { record: 'verdict' }>['value'])
  | ({ record: 'spill-request' } & Extract<Output, { record: 'spill-request' }>['value'])
  | ({ record: 'audit' } & Extract<Output, { record: 'audit' }>['value'])
  | DeadLetterRecord;

export function offlineDecidedAt(input: EngineInput): number {
  return input.occurredAt ?? 0;
}

export function flatten(outputs: readonly Output[]): AuditLineRecord[] {
  return outputs.map((o) => ({ record: o.record, ...o.value }) as AuditLineRecord);
}

/** What a replay needs of its sessions: one event through its session, the outputs back. */
export interface ReplayFleet {
  process(input: EngineInput, decidedAt: number): { readonly outputs: readonly Output[] };
}

/**
 * The replay's sessions, owned by it: each event through `evolveInPlace` on the session's state,
 * the step the processor runs on a batch's working copy (src/kafka/batch/planner.ts).
 */
export class SessionsInPlace extends Fleet {
  constructor(options: EngineOptions = engineOptions()) {
    super(options, evolveInPlace);
  }
}

export class Replay {
  readonly fleet: ReplayFleet;

  constructor(fleet: ReplayFleet = new SessionsInPlace()) {
    this.fleet = fleet;
  }

  /** One line as text. Blank lines produce nothing (contract §7). */
  line(text: string, lineNumber: number): AuditLineRecord[] {
    if (text.trim() === '') return [];
    return this.decided(decodeEventLine(text), lineNumber, () => shownLine(Buffer.from(text)));
  }

  /**
   * A line longer than `limit`, the input topic's `max.message.bytes`: no producer could write
   * it as one record, so it is a dead letter (TOO_LONG) whatever it holds, never decoded
   * (decisions 156).
   */
  overlong(line: OverlongLine, lineNumber: number, limit: number): AuditLineRecord[] {
    const dead: DeadLetterRecord = {
      record: 'dead-letter',
      lineNumber,
      error:
        `TOO_LONG: the line is ${line.length} bytes, more than the input topic's max.message.bytes ` +
        `(${limit}; CG_INPUT_MAX_MESSAGE_BYTES, --max-message-bytes): no producer could write it as one record`,
      ...cutLine(line.head, line.length, line.sha256),
    };
    return [dead];
  }

  /**
   * One line as the file's bytes, decoded exactly as a JSON record on Kafka is: a line that is
   * not valid UTF-8 is a dead letter (contract §7). Blank lines produce nothing.
   */
  lineBytes(bytes: Buffer, lineNumber: number): AuditLineRecord[] {
    if (isBlank(bytes)) return [];
    return this.decided(decodeEventBytes(bytes), lineNumber, () => shownLine(bytes));
  }

  private decided(
    decoded: DecodeResult,
    lineNumber: number,
    shown: () => Pick<DeadLetterRecord, 'line' | 'lineBytes' | 'lineSha256'>,
  ): AuditLineRecord[] {
    if (decoded.ok) {
      const { outputs } = this.fleet.process(decoded.event, offlineDecidedAt(decoded.event));
      return flatten(outputs);
    }
    const dead: DeadLetterRecord = {
      record: 'dead-letter',
      lineNumber,
      error: `${decoded.error.code}: ${decoded.error.message}`,
      ...shown(),
    };
    if (!decoded.request) return [dead];
    // A malformed request that can be identified is answered too (contract §3).
    const { outputs } = this.fleet.process(decoded.request, offlineDecidedAt(decoded.request));
    return [dead, ...flatten(outputs)];
  }
}

/** Only JSON whitespace (as `String.prototype.trim` would leave nothing of a text line). */
function isBlank(bytes: Buffer): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) return false;
  return true;
}
