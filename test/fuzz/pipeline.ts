/**
 * The fuzz target: input records as bytes through the processor's path, without Kafka. Each
 * record is decoded as the processor decodes it (`decodeForBatch`: JSON at once, Avro through a
 * codec, here one that reads our own schema instead of asking a registry), then stepped through
 * the engine (`evolveInPlace`) on a small fleet of owned states, and everything the processor
 * would write for it is built and measured: the Avro outputs (verdicts, spill requests, audit
 * records), the dead letter, and the session's changelog record, which must also read back.
 *
 * A record fails the target (a `Finding`) when:
 * - `crash`: anything throws out of the path (the decoders must return results, the engine must
 *   not throw on a decoded event, encoders and the serializer must not throw on its outputs);
 * - `hang`: one record takes more than a second (the runner's watchdog also stops a record that
 *   never returns);
 * - `oversize`: an output or changelog record over 64 KiB, or a dead letter that adds more than
 *   64 KiB to the record it carries (its key and value are the input's own bytes, capped by the
 *   topics' `max.message.bytes`; what the processor adds are its headers);
 * - `bounds`: the decoder accepted an event outside the bounds of contract §3, or answered a
 *   malformed request with an identity over them;
 * - `fragments`: a range set of a state holds more than 128 ranges after an event (§4a).
 */
import type { Message } from 'kafkajs';
import {
  type EngineOptions,
  type Output,
  type SessionState,
  deserializeState,
  engineOptions,
  serializeState,
} from '../../src/engine';
import { evolveInPlace, type EngineInput } from '../../src/engine/step';
import { decodeForBatch } from '../../src/kafka/batch/decoder';
import { stateKey } from '../../src/kafka/changelogKeys';
import { estimatedBytes } from '../../src/kafka/outputChunks';
import {
  KAFKA_DEAD_LETTER_CODES,
  type DecodedRecord,
  type RawRecord,
} from '../../src/kafka/records';
import { deadLetter } from '../../src/kafka/deadLetters';
import { DEFAULT_MAX_MESSAGE_BYTES, fits } from '../../src/kafka/recordLimits';
import type { RegistryCodec } from '../../src/registry/codec';
import { readWireHeader, withHeader } from '../../src/registry/wireFormat';
import { decodeEventAvro } from '../../src/schema/decodeEvent';
import { DECODE_ERROR_CODES, decodeError } from '../../src/schema/errors';
import { auditRecordType, spillRequestType, verdictType } from '../../src/schema/schemas';
import { fuzzRing } from './keys';
import { boundsViolation, setOverLimit } from './oracles';

/** No record the processor writes may exceed this (key, value and headers, as the broker counts). */
export const OUTPUT_BOUND = 64 * 1024;
/** One record through the whole path may take at most this long. */
export const RECORD_TIME_LIMIT_MS = 1000;

export interface FuzzRecord {
  key: Buffer | null;
  value: Buffer | null;
}

/** One fuzz input: records in order through one fleet, with or without the trusted key ring. */
export interface FuzzCase {
  ring: boolean;
  records: FuzzRecord[];
}

export type FindingKind = 'crash' | 'hang' | 'oversize' | 'bounds' | 'fragments';

export interface Finding {
  kind: FindingKind;
  /** Where on the path: decode, engine, encode-output, changelog, restore, dead-letter... */
  stage: string;
  /** The record's index in its case. */
  record: number;
  message: string;
}

export class FuzzFailure extends Error {
  constructor(readonly finding: Finding) {
    super(`${finding.kind} at record ${finding.record} (${finding.stage}): ${finding.message}`);
    this.name = 'FuzzFailure';
  }
}

/** What one record did, for the corpus tests' expectations and the runner's tallies. */
export interface RecordOutcome {
  /** The dead letter's code, or null when the record decoded. */
  deadLetter: string | null;
  outputs: readonly Output[];
  /** The largest record written for it (dead letters: the headers they add). */
  largestBytes: number;
}

const SOURCE_TOPIC = 'agent.context-changes';

/**
 * The registry codec's Avro path without a registry: the Confluent header checked as the codec
 * checks it, and the body read with our own schema whatever id the header names (a registry
 * would hand over the writer's schema; ours is the one every writer of this corpus used).
 */
const LOCAL_CODEC = {
  async decodeEvent(buf: Buffer) {
    const wire = readWireHeader(buf);
    if (wire === null) {
      return {
        ok: false as const,
        error: decodeError('AVRO_DECODE', 'not the Confluent wire format'),
      };
    }
    return decodeEventAvro(wire.body);
  },
} as unknown as RegistryCodec;

const KNOWN_CODES: ReadonlySet<string> = new Set<string>([
  ...DECODE_ERROR_CODES,
  ...KAFKA_DEAD_LETTER_CODES,
]);

function encodeOutput(o: Output): Buffer {
  switch (o.record) {
    case 'verdict':
      return withHeader(1, verdictType.toBuffer(o.value));
    case 'spill-request':
      return withHeader(1, spillRequestType.toBuffer(o.value));
    case 'audit':
      return withHeader(1, auditRecordType.toBuffer(o.value));
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export function fuzzEngineOptions(ring: boolean): EngineOptions {
  return engineOptions({ trustedKeys: ring ? fuzzRing() : null });
}

/** One fleet of sessions fed record by record, as one partition of the processor would be. */
export class Pipeline {
  readonly states = new Map<string, SessionState>();
  private index = 0;
  /** Wall clock of the verdicts (decidedAt): fixed, so that a case replays exactly. */
  private readonly clock = 1_767_225_600_000;

  constructor(private readonly options: EngineOptions) {}

  async feed(r: FuzzRecord): Promise<RecordOutcome> {
    const at = this.index++;
    const started = performance.now();
    const fail = (kind: FindingKind, stage: string, message: string): never => {
      throw new FuzzFailure({ kind, stage, record: at, message });
    };
    const raw: RawRecord = { key: r.key, value: r.value, offset: String(at) };
    let decoded: DecodedRecord;
    try {
      decoded = await decodeForBatch(raw, 'auto', LOCAL_CODEC);
    } catch (e) {
      return fail('crash', 'decode', describe(e));
    }
    let largest = 0;
    let input: EngineInput | null;
    if (decoded.ok) {
      input = decoded.input;
      const out = boundsViolation(input);
      if (out !== null) fail('bounds', 'decode', `accepted an event ${out}`);
    } else {
      if (!KNOWN_CODES.has(decoded.code)) fail('crash', 'decode', `unknown code ${decoded.code}`);
      if (typeof decoded.message !== 'string') fail('crash', 'decode', 'no message');
      input = decoded.answer;
      if (input !== null) {
        const out = boundsViolation(input);
        if (out !== null) fail('bounds', 'decode', `answered a malformed request ${out}`);
      }
      largest = this.deadLetterBytes(raw, decoded.code, decoded.message, fail);
    }
    let outputs: readonly Output[] = [];
    if (input !== null) {
      const sessionId = input.sessionId;
      let state: SessionState | undefined;
      try {
        const result = evolveInPlace(
          this.states.get(sessionId),
          input,
          this.clock + at,
          this.options,
        );
        state = result.state;
        outputs = result.outputs;
      } catch (e) {
        return fail('crash', 'engine', `${input.type}: ${describe(e)}`);
      }
      if (state !== undefined) this.states.set(sessionId, state);
      const over = state === undefined ? null : setOverLimit(state);
      if (over !== null) fail('fragments', 'engine', over);
      for (const o of outputs) {
        let value: Buffer;
        try {
          value = encodeOutput(o);
        } catch (e) {
          return fail('crash', `encode-${o.record}`, describe(e));
        }
        const bytes = estimatedBytes({ key: o.value.sessionId, value });
        if (bytes > OUTPUT_BOUND) fail('oversize', o.record, `${bytes} bytes`);
        largest = Math.max(largest, bytes);
      }
      if (state !== undefined)
        largest = Math.max(largest, this.changelogBytes(sessionId, state, fail));
    }
    const ms = performance.now() - started;
    if (ms > RECORD_TIME_LIMIT_MS) fail('hang', 'record', `${Math.round(ms)} ms`);
    return { deadLetter: decoded.ok ? null : decoded.code, outputs, largestBytes: largest };
  }

  /** The dead letter as the processor writes it; what it adds to the record must fit the bound. */
  private deadLetterBytes(
    raw: RawRecord,
    code: string,
    message: string,
    fail: (kind: FindingKind, stage: string, message: string) => never,
  ): number {
    let letter: Message;
    try {
      letter = deadLetter(
        raw,
        { topic: SOURCE_TOPIC, partition: 0 },
        code as never,
        message,
        DEFAULT_MAX_MESSAGE_BYTES,
      );
    } catch (e) {
      return fail('crash', 'dead-letter', describe(e));
    }
    if (!fits(letter, DEFAULT_MAX_MESSAGE_BYTES))
      fail('oversize', 'dead-letter', 'over the DLQ limit');
    const carried = estimatedBytes({ key: raw.key, value: raw.value });
    const added = estimatedBytes(letter) - carried;
    if (added > OUTPUT_BOUND) fail('oversize', 'dead-letter', `its headers add ${added} bytes`);
    return added;
  }

  /** The session's changelog record, which a restore must read back. */
  private changelogBytes(
    sessionId: string,
    state: SessionState,
    fail: (kind: FindingKind, stage: string, message: string) => never,
  ): number {
    let value: Buffer;
    try {
      value = serializeState(state);
    } catch (e) {
      return fail('crash', 'changelog', describe(e));
    }
    const bytes = estimatedBytes({ key: stateKey(sessionId), value });
    if (bytes > OUTPUT_BOUND) fail('oversize', 'changelog', `${bytes} bytes`);
    try {
      deserializeState(value);
    } catch (e) {
      return fail('crash', 'restore', describe(e));
    }
    return bytes;
  }
}

/**
 * A whole case through a fresh fleet; throws FuzzFailure on the first finding. `before` is
 * called with each record's index before it starts (the runner's watchdog).
 */
export async function runCase(
  c: FuzzCase,
  before?: (index: number) => void,
): Promise<RecordOutcome[]> {
  const pipeline = new Pipeline(fuzzEngineOptions(c.ring));
  const outcomes: RecordOutcome[] = [];
  for (let i = 0; i < c.records.length; i++) {
    before?.(i);
    outcomes.push(await pipeline.feed(c.records[i]!));
  }
  return outcomes;
}
