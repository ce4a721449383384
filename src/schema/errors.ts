/**
 * Why an input event is malformed (contract §3: "Malformed input is a dead letter (§6), never a
 * crash"). The codes are a closed set so that dead-letter headers and metrics can be keyed on
 * them; the message says which field, what was expected and what was found.
 */
export const DECODE_ERROR_CODES = [
  /** The bytes are not valid UTF-8 (a JSON record, on Kafka and offline alike; contract §3). */
  'NOT_UTF8',
  /**
   * The record nests objects and arrays more than 32 levels deep (the record itself is level 1),
   * in any field, known or not (contract §3, bounds): checked on the text without recursion,
   * before anything else walks it.
   */
  'TOO_DEEP',
  /** The line is not JSON at all (callers that parse text). */
  'NOT_JSON',
  /**
   * An object of the record has a key twice: which value counts is undefined, so the record
   * is not decodable (contract §3, fail closed).
   */
  'DUPLICATE_KEY',
  /** The value is JSON but not an object (an array, a string, null...). */
  'NOT_AN_OBJECT',
  /** `type` names no event type of contract §3 (checked before any other field). */
  'UNKNOWN_TYPE',
  /** A required field (one without a schema default) is absent. */
  'MISSING_FIELD',
  /** A field holds a value of another JSON type than its schema type. */
  'WRONG_TYPE',
  /** An enum field holds a symbol outside its list. */
  'BAD_ENUM',
  /** A number where the schema wants a long is fractional or not a safe integer. */
  'NOT_AN_INTEGER',
  /** An integer field holds more than 2^52 − 1 (contract §3, bounds). */
  'NUMBER_TOO_LARGE',
  /** A number is negative: seq, a position, a span, a token figure, occurredAt (contract §3). */
  'NEGATIVE_NUMBER',
  /**
   * An identifier over 256 bytes in UTF-8, a spillRequestId over 1,024, a free text over 4,096,
   * or `pins` with more than 16 items (contract §3, bounds); offline, also a line longer than
   * the input topic's max.message.bytes, which no producer could write (decisions 156).
   */
  'TOO_LONG',
  /** A range `{start, end}` has `end < start` (contract §3). */
  'REVERSED_RANGE',
  /** A TurnAppended is empty in some unit (contract §3). */
  'EMPTY_TURN',
  /** Avro body that avsc cannot read (truncated, trailing bytes, bad union index...). */
  'AVRO_DECODE',
  /** Avro record whose `type` field disagrees with its union branch. */
  'TYPE_MISMATCH',
  /**
   * The decoder threw on the value: a bug of ours, dead-lettered so that its partition goes on
   * (decisions 70); the message quotes the error.
   */
  'DECODER_FAILED',
] as const;

export type DecodeErrorCode = (typeof DECODE_ERROR_CODES)[number];

export interface DecodeError {
  code: DecodeErrorCode;
  /** One readable sentence, e.g. `field "tokens.end": expected long, got "12"`. */
  message: string;
  /** Dotted path of the offending field (`tokens.end`, `pins[1]`); absent for whole-value errors. */
  field?: string;
}

export function decodeError(code: DecodeErrorCode, message: string, field?: string): DecodeError {
  return field === undefined ? { code, message } : { code, message, field };
}
