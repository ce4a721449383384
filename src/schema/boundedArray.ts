/**
 * avsc 5.7.9 trusts an Avro array's block count: a 10-byte body claiming 4 billion pins makes
 * it allocate and loop until memory runs out (a count of 10^8 already takes ~12 s). contract §6
 * and §8: bad input must never stop the processor. Every item of our arrays takes at least
 * one byte, so a block claiming more items than bytes are left is malformed; this array type
 * says so before reading it. It overrides avsc's internal `_read` (the method resolvers reuse
 * too), so it is tied to the pinned avsc version; test/unit/schema-avro.test.ts covers it.
 */
import { types } from 'avsc';

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

/** A `typeHook` for `Type.forSchema`: arrays become bounded (arrays of null, whose items take
 * no bytes, are refused; our arrays hold enums). */
export function boundedArrayHook(schema: unknown, opts: object): types.ArrayType | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  if ((schema as { type?: unknown }).type !== 'array') return undefined;
  const items = (schema as { items?: unknown }).items;
  if (items === 'null') throw new Error('arrays of null cannot be bounded by their size');
  return new BoundedArrayType(schema as ConstructorParameters<typeof types.ArrayType>[0], opts);
}
