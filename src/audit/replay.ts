/**
 * The offline form (contract §7): JSON lines through the same engine, in file order. Pure per
 * line: a line in, the records it produces out. `decidedAt` is the request's occurredAt, so a
 * replay is byte-identical (a malformed request whose occurredAt did not decode: 0).
 */
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
  line: string;
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
 * the step the processor runs on a batch's working copy (src/kafka/batchStep.ts).
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
    return this.decided(decodeEventLine(text), lineNumber, () => text);
  }

  /**
   * One line as the file's bytes, decoded exactly as a JSON record on Kafka is: a line that is
   * not valid UTF-8 is a dead letter (contract §7). Blank lines produce nothing.
   */
  lineBytes(bytes: Buffer, lineNumber: number): AuditLineRecord[] {
    if (isBlank(bytes)) return [];
    return this.decided(decodeEventBytes(bytes), lineNumber, () => bytes.toString('utf8'));
  }

  private decided(
    decoded: DecodeResult,
    lineNumber: number,
    text: () => string,
  ): AuditLineRecord[] {
    if (decoded.ok) {
      const { outputs } = this.fleet.process(decoded.event, offlineDecidedAt(decoded.event));
      return flatten(outputs);
    }
    const dead: DeadLetterRecord = {
      record: 'dead-letter',
      lineNumber,
      error: `${decoded.error.code}: ${decoded.error.message}`,
      line: text(),
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
