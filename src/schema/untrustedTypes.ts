/**
 * avsc types hardened for untrusted Avro bodies (the input topic), by overriding avsc's internal
 * `_read` (the method resolvers reuse too), so tied to the pinned avsc version;
 * test/unit/schema-avro.test.ts covers both.
 *
 * Arrays: avsc 5.7.9 trusts an Avro array's block count: a 10-byte body claiming 4 billion pins makes
 * it allocate and loop until memory runs out (a count of 10^8 already takes ~12 s). contract §6
 * and §8: bad input must never stop the processor. Every item of our arrays takes at least
 * one byte, so a block claiming more items than bytes are left is malformed; this array type
 * says so before reading it. It overrides avsc's internal `_read` (the method resolvers reuse
 * too), so it is tied to the pinned avsc version; test/unit/schema-avro.test.ts covers it.
 */
import { types } from 'avsc';
import { firstInvalidUtf8 } from './jsonText';

/** The part of avsc's internal Tap this reader uses. */
interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
}

interface ReadableType {
  _read(tap: Tap): unknown;
}

export class BoundedArrayType extends types.ArrayType {}

function readBoundedArray(this: types.ArrayType, tap: Tap): unknown[] {
  const items = this.itemsType as unknown as ReadableType;
  const values: unknown[] = [];
  for (let count = tap.readLong(); count !== 0; count = tap.readLong()) {
    if (count < 0) {
      count = -count;
      tap.skipLong(); // a negative count is followed by the block's size in bytes
    }
    if (count > tap.buf.length - tap.pos) {
      throw new Error(`array block claims ${count} items in ${tap.buf.length - tap.pos} bytes`);
    }
    for (let i = 0; i < count; i++) values.push(items._read(tap));
  }
  return values;
}

Object.defineProperty(BoundedArrayType.prototype, '_read', { value: readBoundedArray });

/**
 * Strings: avsc decodes a string's bytes leniently (invalid UTF-8 becomes U+FFFD), which would
 * accept in Avro what contract §3 dead-letters as NOT_UTF8 in JSON. This string type reads the
 * bytes strictly and throws `NotUtf8Error`, which the decoder reports as NOT_UTF8.
 */
export class NotUtf8Error extends Error {
  constructor(readonly offset: number) {
    super(`a string is not valid UTF-8 (byte offset ${offset} of the body)`);
    this.name = 'NotUtf8Error';
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

interface StringTap extends Tap {
  _invalidate(): void;
}

function readStrictString(this: types.StringType, tap: StringTap): string | undefined {
  const length = tap.readLong();
  if (length < 0) {
    tap._invalidate();
    return '';
  }
  const start = tap.pos;
  tap.pos += length;
  if (tap.pos > tap.buf.length) return undefined; // avsc reports the truncated body
  const bytes = tap.buf.subarray(start, start + length);
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new NotUtf8Error(start + Math.max(0, firstInvalidUtf8(bytes)));
  }
}

export class StrictStringType extends types.StringType {}

Object.defineProperty(StrictStringType.prototype, '_read', { value: readStrictString });

/**
 * A `typeHook` for `Type.forSchema` on untrusted schemas: arrays become bounded (arrays of null,
 * whose items take no bytes, are refused; our arrays hold enums) and strings strict.
 */
export function untrustedTypeHook(
  schema: unknown,
  opts: object,
): types.ArrayType | types.StringType | undefined {
  if (schema === 'string' || (schema as { type?: unknown } | null)?.type === 'string') {
    return new StrictStringType();
  }
  if (typeof schema !== 'object' || schema === null) return undefined;
  if ((schema as { type?: unknown }).type !== 'array') return undefined;
  const items = (schema as { items?: unknown }).items;
  if (items === 'null') throw new Error('arrays of null cannot be bounded by their size');
  return new BoundedArrayType(schema as ConstructorParameters<typeof types.ArrayType>[0], opts);
}
