/**
 * Kafka records in and out of the engine: decoding an input record (Avro or JSON) into an
 * engine input or a dead letter, and building output, changelog and dead-letter messages.
 */
import type { Message } from './kafkajs';
import type { EngineInput } from '../engine/evolve';
import type { Output } from '../engine/collector';
import type { InputFormat } from '../config/config';
import type { RegistryCodec } from '../registry/codec';
import { decodeEventBytes, type DecodeResult } from '../schema/decodeEvent';
import type { DecodeErrorCode } from '../schema/errors';
import { quoted } from './boundedText';

/**
 * Why a record went to the DLQ: the decoder's codes plus the processor's own. Besides the two
 * Kafka-level checks, each code names the stage of the processor that failed on the record
 * (contract §8: a fault of the processor's own code on one record dead-letters that record and
 * leaves its session's state as it was before it; docs/decisions.md 119).
 */
export const KAFKA_DEAD_LETTER_CODES = [
  'EMPTY_VALUE',
  'KEY_MISMATCH',
  /** The session's committed state could not be read back (its changelog bytes do not decode). */
  'STATE_UNREADABLE',
  /** The engine threw while stepping the record (a bug of compaction-guard). */
  'ENGINE_FAILED',
  /**
   * The session's state after the record could not be serialized, or its changelog record would
   * exceed the changelog topic's `max.message.bytes`.
   */
  'STATE_NOT_SERIALIZABLE',
  /** The output encoder threw on one of the record's outputs (verdict, spill request, audit). */
  'OUTPUT_ENCODE_FAILED',
  /**
   * One of the record's outputs would exceed its topic's `max.message.bytes`, or the broker
   * refused it as too large (MESSAGE_TOO_LARGE).
   */
  'OUTPUT_TOO_LARGE',
] as const;
export type DeadLetterCode = DecodeErrorCode | (typeof KAFKA_DEAD_LETTER_CODES)[number];

export type DecodedRecord =
  | { ok: true; input: EngineInput }
  | { ok: false; code: DeadLetterCode; message: string; answer: EngineInput | null };

export interface RawRecord {
  key: Buffer | null;
  value: Buffer | null;
  offset: string;
}

/** Auto: the Confluent wire format starts with magic byte 0, a JSON object with `{` or space. */
function isAvro(value: Buffer, format: InputFormat): boolean {
  return format === 'avro' || (format === 'auto' && value[0] === 0);
}

/**
 * contract §3 plus one Kafka rule: the record key must be the event's sessionId, since per-session
 * order and state rely on partitioning by it (a misrouted event would split a session's state).
 */
export async function decodeRecord(
  r: RawRecord,
  format: InputFormat,
  codec: RegistryCodec,
): Promise<DecodedRecord> {
  return (
    decodeRecordNow(r, format) ?? withKey(r, await codec.decodeEvent(r.value as Buffer)) // not empty: checked by decodeRecordNow
  );
}

/**
 * `decodeRecord` without a promise for every record that needs no schema registry (JSON values,
 * empty values); undefined for an Avro value, which needs `decodeRecord`.
 */
export function decodeRecordNow(r: RawRecord, format: InputFormat): DecodedRecord | undefined {
  if (r.value === null || r.value.length === 0) {
    return {
      ok: false,
      code: 'EMPTY_VALUE',
      message: 'record has no value (tombstone or empty)',
      answer: null,
    };
  }
  if (isAvro(r.value, format)) return undefined;
  return withKey(r, decodeEventBytes(r.value));
}

function withKey(r: RawRecord, decoded: DecodeResult): DecodedRecord {
  if (!decoded.ok) {
    return {
      ok: false,
      code: decoded.error.code,
      message: decoded.error.message,
      answer: decoded.request ?? null,
    };
  }
  const key = r.key?.toString('utf8') ?? null;
  if (key !== decoded.event.sessionId) {
    return {
      ok: false,
      code: 'KEY_MISMATCH',
      message: `record key ${quoted(key)} is not the event's sessionId ${quoted(decoded.event.sessionId)}`,
      answer: null,
    };
  }
  return { ok: true, input: decoded.event };
}

export interface OutputTopics {
  verdictTopic: string;
  spillTopic: string;
  auditTopic: string;
}

/** Avro-encoded output messages keyed by sessionId, in the engine's order (contract §6). */
export function outputMessage(
  o: Output,
  codec: Pick<RegistryCodec, 'encodeVerdict' | 'encodeSpillRequest' | 'encodeAudit'>,
  t: OutputTopics,
): { topic: string; message: Message } {
  switch (o.record) {
    case 'verdict':
      return {
        topic: t.verdictTopic,
        message: { key: o.value.sessionId, value: codec.encodeVerdict(o.value) },
      };
    case 'spill-request':
      return {
        topic: t.spillTopic,
        message: { key: o.value.sessionId, value: codec.encodeSpillRequest(o.value) },
      };
    case 'audit':
      return {
        topic: t.auditTopic,
        message: { key: o.value.sessionId, value: codec.encodeAudit(o.value) },
      };
  }
}
