/**
 * Decoding of input events (contract §3) from JSON objects, JSON lines and Avro bodies into the
 * engine's flat `ContextEvent`, and encoding back to Avro. Bad input is a result, never a throw:
 * "Malformed input is a dead letter (§6), never a crash".
 */
import type { Type } from 'avsc';
import { EVENT_TYPES } from '../engine/events';
import type { ContextEvent, EventType, MalformedRequest } from '../engine/events';
import { decodeError } from './errors';
import type { DecodeError } from './errors';
import { type DuplicateKey, findDuplicateKeys, firstInvalidUtf8 } from './jsonText';
import { eventRecordType, eventUnionType, isEventType, unwrapEvent, wrapEvent } from './schemas';
import { NotUtf8Error } from './untrustedTypes';
import {
  MAX_INTEGER,
  MAX_PINS,
  STRING_LIMITS,
  longerThan,
  scanJsonText,
  scanValue,
} from './bounds';
import {
  REJECTED,
  compileConformer,
  conform,
  type Conformer,
  describeValue,
  type FieldLimits,
  fieldError,
  findFirstError,
  isPlainObject,
} from './validate';

export type DecodeResult =
  { ok: true; event: ContextEvent } | { ok: false; error: DecodeError; request?: MalformedRequest };

/** contract §3: "a turn that is empty in some unit" (in TURNS a turn is [turn, turn+1)). */
function emptyTurn(record: string, field: string, value: unknown, path: readonly string[]) {
  if (record !== 'TurnAppended' || (field !== 'tokens' && field !== 'messages')) return undefined;
  const { start, end } = value as { start: number; end: number };
  if (end !== start) return undefined;
  return fieldError('EMPTY_TURN', path, `a turn must not be empty, got [${start}, ${end})`);
}

/** The input events' bounds (contract §3) and the empty-turn rule, for every field check. */
export const EVENT_LIMITS: FieldLimits = {
  strings: STRING_LIMITS,
  maxItems: MAX_PINS,
  afterField: emptyTurn,
};

/**
 * An event handed over as a value (the client, tests): contract §3 in its order. Not text (an
 * unpaired surrogate in any string: NOT_UTF8), too deep (TOO_DEEP), then as `decodeChecked`.
 * Fields the schema does not declare are ignored (forward compatibility, schemas/README.md).
 */
export function decodeEventJson(value: unknown): DecodeResult {
  try {
    const found = scanValue(value);
    if (found !== null) {
      const what = found.code === 'NOT_UTF8' ? `not text: ${found.what}` : found.what;
      return failure(decodeError(found.code, what));
    }
    return decodeChecked(value);
  } catch (e) {
    return decoderFailure(value, e);
  }
}

/** A value parsed from a text that passed the text checks (no surrogate, not too deep). */
function decodeParsed(value: unknown): DecodeResult {
  try {
    return decodeChecked(value);
  } catch (e) {
    return decoderFailure(value, e);
  }
}

/**
 * A throw while decoding is a bug of ours on this value (such as an object avsc cannot look up
 * as an enum symbol, `{"toString":null}`, had validate.ts not refused it first), or, through the
 * client, an object whose getter throws. As a result it is a dead letter that says so: the
 * processor retries a decoding that throws as if the registry were down, so a throw would hold
 * the record's partition for good. Both cases: test/unit/schema-decode-malformed.test.ts.
 */
function decoderFailure(value: unknown, e: unknown): DecodeResult {
  const cause = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const error = decodeError(
    'DECODER_FAILED',
    `the decoder failed on this value (a compaction-guard bug; please report it with the record): ${cause}`,
  );
  try {
    return failure(error, isPlainObject(value) ? value : undefined);
  } catch {
    // Its identity fields cannot be read either: no answer to salvage.
    return failure(error);
  }
}

/**
 * contract §3, in its order after the text checks: not an object; `type` missing, not a string
 * or unknown (checked before any other field); then the fields in schema order (the common ones
 * first, `signature` last), each with the first check it fails (`findFirstError`).
 */
function decodeChecked(value: unknown): DecodeResult {
  if (!isPlainObject(value)) {
    const found = Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
    return failure(decodeError('NOT_AN_OBJECT', `expected a JSON object, got ${found}`));
  }
  const object = value;
  const type = Object.prototype.hasOwnProperty.call(object, 'type') ? object.type : undefined;
  if (type === undefined) {
    return failure(fieldError('MISSING_FIELD', ['type'], 'required field is missing'));
  }
  if (typeof type !== 'string') {
    const what = `expected string, got ${describeValue(type)}`;
    return failure(fieldError('WRONG_TYPE', ['type'], what));
  }
  if (!isEventType(type)) {
    const what = `unknown event type ${describeValue(type)}`;
    return failure(fieldError('UNKNOWN_TYPE', ['type'], what));
  }
  // One pass for the valid events; anything it does not vouch for takes the precise path below,
  // which names the first problem (in schema order) or accepts.
  const fast = conformValid(type, object);
  if (fast !== undefined) return { ok: true, event: fast };
  const recordType = eventRecordType(type);
  const event = conform(recordType, object);
  const error = findFirstError(recordType, event, EVENT_LIMITS);
  return error ? failure(error, object) : { ok: true, event: event as ContextEvent };
}

/**
 * One JSON line (offline `audit`, JSON producers), contract §3 in its order: an unpaired
 * surrogate (NOT_UTF8), nesting deeper than 32 (TOO_DEEP), both found on the text without
 * recursion before anything walks it; NOT_JSON when it does not parse; DUPLICATE_KEY when an
 * object of it has a key twice (not decodable); then the value's checks.
 */
export function decodeEventLine(line: string): DecodeResult {
  const found = scanJsonText(line);
  if (found !== null) {
    const what =
      found.code === 'NOT_UTF8'
        ? `not valid UTF-8: ${found.what} at character offset ${found.offset}`
        : `${found.what}: level ${MAX_DEPTH_PLUS_ONE} opens at character offset ${found.offset}`;
    return failure(decodeError(found.code, what));
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return failure(decodeError('NOT_JSON', `not JSON: ${(e as Error).message}`));
  }
  const duplicates = findDuplicateKeys(line, value);
  if (duplicates.length > 0) return duplicateKeyFailure(value, duplicates);
  return decodeParsed(value);
}

const MAX_DEPTH_PLUS_ONE = 33;

/**
 * Fatal on invalid UTF-8; a byte-order mark is kept, so a record that starts with one is
 * NOT_JSON as JSON.parse finds it (only `audit` skips the one BOM at the start of a file).
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A JSON record's bytes, on Kafka and offline alike: NOT_UTF8 unless they are valid UTF-8
 * (a decoder that replaced bad bytes would accept here what is dead-lettered there).
 */
export function decodeEventBytes(bytes: Uint8Array): DecodeResult {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const byte = (bytes[at] ?? 0).toString(16).padStart(2, '0');
    const what = `not valid UTF-8: byte 0x${byte} at byte offset ${at} does not start or continue a character`;
    return failure(decodeError('NOT_UTF8', what));
  }
  return decodeEventLine(text);
}

/** Top-level fields that must be unambiguous for a malformed request to be answered (§3). */
const REQUEST_IDENTITY = ['type', 'sessionId', 'seq', 'requestId'];

/**
 * DUPLICATE_KEY, naming the first repeated key and where it repeats. A CompactionRequested is
 * still answered (contract §3) when its identity fields are not among the repeated keys; a
 * repeated occurredAt does not decode (requestedAt null).
 */
function duplicateKeyFailure(value: unknown, duplicates: readonly DuplicateKey[]): DecodeResult {
  const [first] = duplicates as [DuplicateKey];
  const more = duplicates.length > 1 ? ` (and ${duplicates.length - 1} more repeated keys)` : '';
  const error = decodeError(
    'DUPLICATE_KEY',
    `key ${describeValue(first.key)} appears twice in one object (again at character offset ${first.offset})${more}: which value counts is undefined`,
    first.key,
  );
  if (!isPlainObject(value)) return failure(error);
  const repeated = new Set(duplicates.filter((d) => d.depth === 1).map((d) => d.key));
  if (REQUEST_IDENTITY.some((k) => repeated.has(k))) return failure(error);
  const object = value;
  return failure(error, repeated.has('occurredAt') ? { ...object, occurredAt: null } : object);
}

const resolvers = new WeakMap<Type, ReturnType<Type['createResolver']>>();

/**
 * An Avro body (Confluent wire-format header already stripped). `writerType`: the schema the
 * producer wrote with (from the registry, parsed with `parseEventSchema(...).union`), when it is
 * not ours; avsc resolves it to ours (schemas/README.md, evolution rules).
 */
export function decodeEventAvro(buf: Buffer, writerType?: Type): DecodeResult {
  let wrapped: unknown;
  try {
    wrapped =
      writerType === undefined || writerType === eventUnionType
        ? eventUnionType.fromBuffer(buf)
        : eventUnionType.fromBuffer(buf, resolverFor(writerType));
  } catch (e) {
    if (e instanceof NotUtf8Error) return failure(decodeError('NOT_UTF8', e.message));
    const what = `Avro body does not decode as a context-change event: ${(e as Error).message}`;
    return failure(decodeError('AVRO_DECODE', what));
  }
  const { branch, record } = unwrapEvent(wrapped);
  if (!isEventType(branch)) {
    return failure(decodeError('UNKNOWN_TYPE', `unknown Avro union branch ${branch}`));
  }
  const fast = conformValid(branch, record);
  if (fast !== undefined && fast.type === branch) return { ok: true, event: fast };
  const recordType = eventRecordType(branch);
  const event = conform(recordType, record) as Record<string, unknown>;
  if (event.type !== branch) {
    const what = `the ${branch} record says ${describeValue(event.type)}`;
    return failure(fieldError('TYPE_MISMATCH', ['type'], what), { ...event, type: branch });
  }
  const error = findFirstError(recordType, event, EVENT_LIMITS);
  return error ? failure(error, event) : { ok: true, event: event as unknown as ContextEvent };
}

function resolverFor(writerType: Type): ReturnType<Type['createResolver']> {
  let resolver = resolvers.get(writerType);
  if (resolver === undefined) {
    resolver = eventUnionType.createResolver(writerType);
    resolvers.set(writerType, resolver);
  }
  return resolver;
}

/** For producers and tests. Throws on an invalid event: producing one is a bug, not input. */
export function encodeEventAvro(event: ContextEvent): Buffer {
  const recordType = eventRecordType(event.type);
  const error = findFirstError(recordType, conform(recordType, event), EVENT_LIMITS);
  if (error) throw new Error(`cannot encode ${event.type}: ${error.message}`);
  return eventUnionType.toBuffer(wrapEvent(event));
}

/** Each event type's record conformer (validate.ts), compiled once. */
const conformers = new Map<string, Conformer>(
  EVENT_TYPES.map((type) => [type, compileConformer(eventRecordType(type), EVENT_LIMITS)]),
);

/**
 * The event `conform` makes of `value` when it is valid (schema and semantic rules), in one
 * pass; undefined when it is not, or when the one pass cannot vouch for it: the caller then takes
 * the precise path, which gives the same event or names the problem.
 */
function conformValid(type: EventType, value: unknown): ContextEvent | undefined {
  const event = (conformers.get(type) as Conformer)(value);
  if (event === REJECTED) return undefined;
  const e = event as ContextEvent;
  // findEmptyTurn, inline: a fast no for the common case.
  if (e.type === 'TurnAppended') {
    if (e.tokens.end === e.tokens.start || e.messages.end === e.messages.start) return undefined;
  }
  return e;
}

/**
 * contract §3: "a malformed CompactionRequested whose sessionId, seq and requestId decode is
 * dead-lettered and also answered ... requestedAt null if occurredAt does not decode".
 */
function failure(error: DecodeError, object?: Record<string, unknown>): DecodeResult {
  const request = object && salvageRequest(object, error);
  return request ? { ok: false, error, request } : { ok: false, error };
}

/** An identifier within the bounds of contract §3, as a request's answer may carry it. */
function isBoundedId(value: unknown): value is string {
  return typeof value === 'string' && !longerThan(value, STRING_LIMITS.sessionId!);
}

function salvageRequest(
  object: Record<string, unknown>,
  error: DecodeError,
): MalformedRequest | undefined {
  const { type, sessionId, seq, requestId, eventId, occurredAt } = object;
  if (type !== 'CompactionRequested') return undefined;
  // Only identity within the bounds is answered (§3): a 540 KB requestId copied into a verdict
  // would make the verdict itself too large to write.
  if (!isBoundedId(sessionId) || !isBoundedId(requestId)) return undefined;
  if (!isNonNegativeSafeInteger(seq)) return undefined;
  return {
    type: 'MalformedRequest',
    sessionId,
    seq,
    requestId,
    // The verdict's requestEventId (contract §6), by which an orchestrator takes the verdict of
    // the event it sent: named when it decodes as a string within the identifier bound.
    eventId: isBoundedId(eventId) ? eventId : null,
    occurredAt: isNonNegativeSafeInteger(occurredAt) ? occurredAt : null,
    error: error.message,
  };
}

/** "Decodes" as an integer field of ours would: a non-negative integer up to 2^52 − 1. */
function isNonNegativeSafeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_INTEGER;
}
