/**
 * Schema-driven checks of a value against an avsc type, with errors precise enough for a dead
 * letter: which field, what was expected, what was found (contract §3, §6). avsc decides what is
 * valid (the schema is the single source of truth); this module only adds what avsc leaves out:
 * defaults for absent fields, readable messages, and the semantic rules of contract §3.
 */
import type { Type, types } from 'avsc';
import { decodeError } from './errors';
import type { DecodeError } from './errors';

type Path = readonly string[];

/** avsc's longs stop 1 short of Number.MAX_SAFE_INTEGER (it refuses to encode beyond). */
export const MAX_LONG = 9_007_199_254_740_990;

const isRecordType = (t: Type): t is types.RecordType => t.typeName === 'record';
const isArrayType = (t: Type): t is types.ArrayType => t.typeName === 'array';
const isEnumType = (t: Type): t is types.EnumType => t.typeName === 'enum';
const isUnionType = (t: Type): t is types.UnwrappedUnionType => t.typeName.startsWith('union');

/** A JSON object (not an array, not null): what an event and each of its records must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function ownField(value: Record<string, unknown>, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(value, name) ? value[name] : undefined;
}

/** `["policy","floor","span"]` → `policy.floor.span`; array indices as `pins[1]`. */
export function renderPath(path: Path): string {
  return path.reduce((out, part) => {
    if (/^\d+$/.test(part)) return `${out}[${part}]`;
    return out === '' ? part : `${out}.${part}`;
  }, '');
}

/**
 * A plain copy of `value` shaped by `type`: absent fields that have a schema default get it
 * (contract §3: "Fields with a default may be absent"), fields the schema does not declare are
 * dropped (forward compatibility: a newer producer may add fields; see schemas/README.md), -0
 * becomes 0, and avsc record instances become plain objects. Values of the wrong shape are
 * copied as they are, for `findInvalid` to report.
 */
export function conform(type: Type, value: unknown): unknown {
  if (isRecordType(type)) {
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    for (const field of type.fields) {
      const own = ownField(value, field.name);
      const given: unknown = own === undefined ? field.defaultValue() : own;
      if (given !== undefined) out[field.name] = conform(field.type, given);
    }
    return out;
  }
  if (isArrayType(type)) {
    return Array.isArray(value) ? value.map((item) => conform(type.itemsType, item)) : value;
  }
  if (isUnionType(type)) {
    const nonNull = type.types.filter((t) => t.typeName !== 'null');
    const [only] = nonNull;
    return value === null || nonNull.length !== 1 || only === undefined
      ? value
      : conform(only, value);
  }
  return Object.is(value, -0) ? 0 : value;
}

/** What a compiled conformer returns for a value it does not vouch for. */
export const REJECTED: unique symbol = Symbol('rejected');

/** `value` conformed, or `REJECTED`. */
export type Conformer = (value: unknown) => unknown;

const conformers = new WeakMap<Type, Conformer>();
const hasOwn = Object.prototype.hasOwnProperty;
const rejectAll: Conformer = () => REJECTED;

/**
 * `conform`, `findInvalid` and `findSemanticError` in one pass over the value, for the per-event
 * hot path: returns exactly what `conform(type, value)` returns when neither check would find
 * anything, and `REJECTED` otherwise. It never explains: a rejected value goes through those
 * three functions for its precise error (or for its acceptance: the conformer may reject what it
 * cannot vouch for, e.g. types these schemas do not use, never accept what they would refuse).
 * Kept in step with avsc 5.7.9's checks (`_check` of record, array, unwrapped union, enum,
 * long, string, null); test/unit/schema-conformer.test.ts compares the two on random input.
 */
export function compileConformer(type: Type): Conformer {
  const known = conformers.get(type);
  if (known !== undefined) return known;
  // Registered before compiling, so a named type referring to itself compiles too.
  const late: { conform?: Conformer } = {};
  conformers.set(type, (value) => (late.conform as Conformer)(value));
  const compiled = compileType(type);
  late.conform = compiled;
  conformers.set(type, compiled);
  return compiled;
}

function compileType(type: Type): Conformer {
  if (isRecordType(type)) return compileRecord(type);
  if (isArrayType(type)) {
    const item = compileConformer(type.itemsType);
    return (value) => {
      if (!Array.isArray(value)) return REJECTED;
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        const v = item(value[i]);
        if (v === REJECTED) return REJECTED;
        out[i] = v;
      }
      return out;
    };
  }
  if (isUnionType(type)) {
    // Only `["null", T]` (either order) with T a long, string, enum or record: avsc picks the branch by
    // the value's kind (null or not), and T's conformer refuses every other kind.
    const nonNull = type.types.filter((t) => t.typeName !== 'null');
    const [only] = nonNull;
    const simple = ['long', 'string', 'enum', 'record'];
    const unwrapped = type.typeName === 'union:unwrapped';
    if (!unwrapped || type.types.length !== 2 || !simple.includes(only?.typeName ?? '')) {
      return rejectAll;
    }
    const inner = compileConformer(only as Type);
    return (value) => (value === null ? null : inner(value));
  }
  if (isEnumType(type)) {
    const symbols = new Set(type.symbols);
    return (value) => (typeof value === 'string' && symbols.has(value) ? value : REJECTED);
  }
  switch (type.typeName) {
    case 'long':
      // avsc: an integer within ±MAX_LONG; contract §3: never negative; conform: -0 becomes 0.
      return (value) =>
        typeof value === 'number' && value >= 0 && value <= MAX_LONG && Number.isInteger(value)
          ? value === 0
            ? 0
            : value
          : REJECTED;
    case 'string':
      return (value) => (typeof value === 'string' ? value : REJECTED);
    case 'null':
      return (value) => (value === null ? null : REJECTED);
    default:
      return rejectAll;
  }
}

/**
 * A record's conformer is generated code (as avsc's own checkers are): one straight-line function
 * per record type that reads each field once and builds the result as an object literal, so every
 * conformed value of a type has one shape. Field names are Avro names (`[A-Za-z_][A-Za-z0-9_]*`,
 * enforced by avsc), quoted with JSON.stringify all the same.
 */
function compileRecord(type: types.RecordType): Conformer {
  const args: string[] = ['R', 'hasOwn'];
  const values: unknown[] = [REJECTED, hasOwn];
  const lines: string[] = [
    "if (typeof v !== 'object' || v === null || Array.isArray(v)) return R;",
  ];
  const props: string[] = [];
  type.fields.forEach((field, i) => {
    const name = JSON.stringify(field.name);
    const sample: unknown = field.defaultValue();
    args.push(`c${i}`);
    values.push(compileConformer(field.type));
    lines.push(`var x${i} = hasOwn.call(v, ${name}) ? v[${name}] : undefined;`);
    if (sample === undefined) {
      lines.push(`if (x${i} === undefined) return R;`);
    } else if (sample === null || typeof sample !== 'object') {
      // avsc hands out the same immutable default each time.
      args.push(`d${i}`);
      values.push(sample);
      lines.push(`if (x${i} === undefined) x${i} = d${i};`);
    } else {
      args.push(`f${i}`);
      values.push(field);
      lines.push(`if (x${i} === undefined) x${i} = f${i}.defaultValue();`);
    }
    lines.push(`x${i} = c${i}(x${i});`, `if (x${i} === R) return R;`);
    props.push(`${name}: x${i}`);
  });
  const names = type.fields.map((f) => f.name);
  const start = names.indexOf('start');
  const end = names.indexOf('end');
  if (start >= 0 && end >= 0) lines.push(`if (!(x${end} >= x${start})) return R;`);
  lines.push(`return { ${props.join(', ')} };`);
  const body = `return function conform(v) {\n  ${lines.join('\n  ')}\n};`;
  return new Function(...args, body)(...values) as Conformer;
}

function describeType(type: Type): string {
  if (isEnumType(type)) return `one of ${type.symbols.join(', ')}`;
  if (isRecordType(type)) return `an object (${shortTypeName(type)})`;
  if (isArrayType(type)) return `an array of ${shortTypeName(type.itemsType)}`;
  if (isUnionType(type)) return type.types.map(describeType).join(' or ');
  return type.typeName;
}

function shortTypeName(type: Type): string {
  const name = type.name ?? type.typeName;
  return name.slice(name.lastIndexOf('.') + 1);
}

/** A found value, short: `"12"`, `-1`, `null`, `an object`, `nothing` (absent). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would show as null.
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return `a number too large to represent (${value < 0 ? '-' : ''}1e400 or the like)`;
  }
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `field "tokens.end": <what>`, with `field` set to the rendered path. */
export function fieldError(code: DecodeError['code'], path: Path, what: string): DecodeError {
  const field = renderPath(path);
  return decodeError(code, `field "${field}": ${what}`, field);
}

/** Classifies avsc's complaint about one value (from `isValid`'s errorHook). */
function classify(path: Path, value: unknown, type: Type): DecodeError {
  const expected = describeType(type);
  if (typeof value === 'symbol') {
    // A stand-in of `shieldEnums`: only ever an object or an array at an enum.
    return fieldError(
      'WRONG_TYPE',
      path,
      `expected ${expected}, got ${value.description ?? 'an object'}`,
    );
  }
  if (value === undefined) {
    return fieldError('MISSING_FIELD', path, `required field is missing (expected ${expected})`);
  }
  if (isEnumType(type) && typeof value === 'string') {
    return fieldError('BAD_ENUM', path, `expected ${expected}, got ${describeValue(value)}`);
  }
  if (type.typeName === 'long' && typeof value === 'number') {
    const range = Number.isSafeInteger(value) ? ` within ±${MAX_LONG}` : ' (a safe integer)';
    const what = `expected long${range}, got ${describeValue(value)}`;
    return fieldError('NOT_AN_INTEGER', path, what);
  }
  return fieldError('WRONG_TYPE', path, `expected ${expected}, got ${describeValue(value)}`);
}

/**
 * `value` with every object or array that sits where the schema wants an enum replaced by a
 * symbol that names what it was. avsc 5.7.9 checks an enum by using the value as a property
 * key (`_indices[val]`), which turns an object into a string; for `{"toString":null}`, valid
 * JSON, that conversion throws, out of `isValid`, and a JSON record that throws while decoding
 * is never dead-lettered. A symbol is a key no symbol list holds, so avsc reports it where the
 * object was, in schema order. Copies only along the paths it changes, prototypes kept (avsc
 * reads inherited fields too).
 */
function shieldEnums(type: Type, value: unknown): unknown {
  if (isEnumType(type)) {
    if (typeof value !== 'object' || value === null) return value;
    return Symbol(describeValue(value));
  }
  if (isRecordType(type) && isPlainObject(value)) {
    let copy: Record<string, unknown> | undefined;
    for (const field of type.fields) {
      const given = value[field.name];
      const shielded = shieldEnums(field.type, given);
      if (shielded === given) continue;
      copy ??= Object.assign(Object.create(Object.getPrototypeOf(value) as object | null), value);
      (copy as Record<string, unknown>)[field.name] = shielded;
    }
    return copy ?? value;
  }
  if (isArrayType(type) && Array.isArray(value)) {
    const items = value.map((item: unknown) => shieldEnums(type.itemsType, item));
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  if (isUnionType(type)) {
    const nonNull = type.types.filter((t) => t.typeName !== 'null');
    return nonNull.length === 1 && value !== null ? shieldEnums(nonNull[0] as Type, value) : value;
  }
  return value;
}

/** The first field (in schema order) that avsc finds invalid, or undefined when valid. */
export function findInvalid(type: Type, value: unknown): DecodeError | undefined {
  let first: DecodeError | undefined;
  type.isValid(shieldEnums(type, value), {
    errorHook: (path, any, failing) => {
      first ??= classify(path, any, failing);
    },
  });
  return first;
}

/**
 * The rules of contract §3 that a schema cannot state, on a value `findInvalid` accepted:
 * every long in these schemas is a seq, a position, a span, a token figure or an epoch time, so
 * a negative one is malformed; a range (a record with `start` and `end`) must not be reversed.
 * It also re-checks enum symbols against the list: avsc 5.7.9 looks symbols up in a plain
 * object, so `"constructor"` or `"toString"` would pass its check.
 */
export function findSemanticError(
  type: Type,
  value: unknown,
  path: Path = [],
): DecodeError | undefined {
  if (isRecordType(type) && isPlainObject(value)) {
    for (const field of type.fields) {
      const error = findSemanticError(field.type, value[field.name], [...path, field.name]);
      if (error) return error;
    }
    return findReversedRange(type, value, path);
  }
  if (isArrayType(type) && Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const error = findSemanticError(type.itemsType, item, [...path, String(index)]);
      if (error) return error;
    }
    return undefined;
  }
  if (isUnionType(type)) {
    const branch = type.types.find((t) => t.isValid(value));
    return branch ? findSemanticError(branch, value, path) : undefined;
  }
  if (isEnumType(type) && !type.symbols.includes(value as string)) {
    return fieldError(
      'BAD_ENUM',
      path,
      `expected ${describeType(type)}, got ${describeValue(value)}`,
    );
  }
  if (type.typeName === 'long' && typeof value === 'number' && value < 0) {
    return fieldError('NEGATIVE_NUMBER', path, `expected a non-negative integer, got ${value}`);
  }
  return undefined;
}

function findReversedRange(
  type: types.RecordType,
  value: Record<string, unknown>,
  path: Path,
): DecodeError | undefined {
  const names = type.fields.map((f) => f.name);
  if (!names.includes('start') || !names.includes('end')) return undefined;
  const { start, end } = value as { start: number; end: number };
  if (end >= start) return undefined;
  const what = `range [start, end) must have end >= start, got start ${start}, end ${end}`;
  return fieldError('REVERSED_RANGE', path, what);
}
