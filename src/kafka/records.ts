/**
 * Kafka records in and out of the engine: decoding an input record (Avro or JSON) into an
 * engine input or a dead letter, and building output, changelog and dead-letter messages.
 */
import type { OutRecord } from './transport';
import type { EngineInput } from '../engine/evolve';
import type { Output } from '../engine/collector';
import type { InputFormat } from '../config/config';
import type { RegistryCodec } from '../registry/codec';
import { decodeEventBytes, type DecodeResult } from '../schema/decodeEvent';
import type { DecodeErrorCode } from '../schema/errors';
import { quoted, quotedKey } from './boundedText';
import { keyPartition } from './murmur2';

/**
 * Why a record went to the DLQ: the decoder's codes plus the processor's own. Besides the two
 * Kafka-level checks, each code names the stage of the processor that failed on the record
 * (contract §8: a fault of the processor's own code on one record dead-letters that record and
 * leaves its session's state as it was before it; docs/decisions.md 119).
 */
export const KAFKA_DEAD_LETTER_CODES = [
  'EMPTY_VALUE',
  /**
   * The record is not on the partition its key maps to (Kafka's default partitioner: murmur2 of
   * the key bytes, made positive, modulo the input topic's partition count): written there on
   * purpose, it would start a second state for its session beside the real one (decisions 145).
   */
  'WRONG_PARTITION',
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

/** Where a record was read: its partition, of the input topic's `partitions`. */
export interface InputRoute {
  partition: number;
  partitions: number;
}

/** Auto: the Confluent wire format starts with magic byte 0, a JSON object with `{` or space. */
function isAvro(value: Buffer, format: InputFormat): boolean {
  return format === 'avro' || (format === 'auto' && value[0] === 0);
}

/**
 * contract §3 plus the Kafka rules, since per-session order and state rely on partitioning by
 * sessionId (a misrouted event would split a session's state): a record with no value is
 * EMPTY_VALUE; a record on another partition than its key maps to (`route`) is WRONG_PARTITION,
 * before its value is read; then the value's checks; then its key must be the event's sessionId
 * (KEY_MISMATCH). A malformed request is answered only when its key is its sessionId
 * (docs/decisions.md 145, 146). Without `route` (offline callers) the partition is not checked.
 */
export async function decodeRecord(
  r: RawRecord,
  format: InputFormat,
  codec: RegistryCodec,
  route?: InputRoute,
): Promise<DecodedRecord> {
  return (
    decodeRecordNow(r, format, route) ?? withKey(r, await codec.decodeEvent(r.value as Buffer)) // not empty, on its partition: checked by decodeRecordNow
  );
}

/**
 * `decodeRecord` without a promise for every record that needs no schema registry (JSON values,
 * empty values, records on the wrong partition); undefined for an Avro value, which needs
 * `decodeRecord`.
 */
export function decodeRecordNow(
  r: RawRecord,
  format: InputFormat,
  route?: InputRoute,
): DecodedRecord | undefined {
  if (r.value === null || r.value.length === 0) {
    return {
      ok: false,
      code: 'EMPTY_VALUE',
      message: 'record has no value (tombstone or empty)',
      answer: null,
    };
  }
  const misplaced = route === undefined ? null : wrongPartition(r, route);
  if (misplaced !== null) return misplaced;
  if (isAvro(r.value, format)) return undefined;
  return withKey(r, decodeEventBytes(r.value));
}

/**
 * WRONG_PARTITION when the record's key maps to another partition than the one it was read
 * from; null when it is where its key maps to, or has no key (a null key maps to no partition:
 * KEY_MISMATCH once its value is read, decisions 146). Linear in the key (src/kafka/murmur2.ts).
 */
export function wrongPartition(r: RawRecord, route: InputRoute): DecodedRecord | null {
  if (r.key === null) return null;
  const home = keyPartition(r.key, route.partitions);
  if (home === route.partition) return null;
  return {
    ok: false,
    code: 'WRONG_PARTITION',
    message: `record key ${quotedKey(r.key)} maps to partition ${home} of ${route.partitions} (Kafka's default partitioner: murmur2 of the key), but the record is on partition ${route.partition}: not decided, so that its session has one state`,
    answer: null,
  };
}

/**
 * Whether `key` is the bytes of `sessionId` in UTF-8, byte for byte: the partition is chosen by
 * the key's bytes, so a key that only decodes to the sessionId (invalid UTF-8 replaced) could
 * place the session on another partition (decisions 146).
 */
export function isKeyOf(key: Buffer | null, sessionId: string): boolean {
  if (key === null) return false;
  if (isAsciiOf(key, sessionId)) return true;
  return key.length === Buffer.byteLength(sessionId) && key.equals(Buffer.from(sessionId));
}

/**
 * Whether `bytes` are `text` and `text` is ASCII, whose UTF-8 bytes are its character codes:
 * the common sessionId, checked without encoding it (a copy per record). False for any other
 * text (a code of 0x80 or more is two bytes or more in UTF-8), which `isKeyOf` then encodes.
 */
function isAsciiOf(bytes: Buffer, text: string): boolean {
  if (bytes.length !== text.length) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || c !== bytes[i]) return false;
  }
  return true;
}

function withKey(r: RawRecord, decoded: DecodeResult): DecodedRecord {
  if (!decoded.ok) {
    const request = decoded.request ?? null;
    // Answering a request steps its session's state (its seq takes its place): only on the
    // partition that holds it, i.e. when the key, which placed the record, is its sessionId.
    const keyed = request === null || isKeyOf(r.key, request.sessionId);
    return {
      ok: false,
      code: decoded.error.code,
      message: keyed
        ? decoded.error.message
        : `${decoded.error.message}; not answered: the record key is not its sessionId`,
      answer: keyed ? request : null,
    };
  }
  if (!isKeyOf(r.key, decoded.event.sessionId)) {
    return {
      ok: false,
      code: 'KEY_MISMATCH',
      message: `record key ${quotedKey(r.key)} is not the event's sessionId ${quoted(decoded.event.sessionId)}`,
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
): { topic: string; message: OutRecord } {
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
