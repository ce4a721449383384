/**
 * Schema-driven checks of a value against an avsc type, with errors precise enough for a dead
 * letter: which field, what was expected, what was found (contract §3, §6). The schema is the
 * single source of truth for fields, types, symbols and defaults; this module adds defaults for
 * absent fields, readable messages, the rules of contract §3 a schema cannot state (no negative
 * number, no reversed range) and its bounds (integers up to 2^52 − 1, string and array limits),
 * checked field by field in schema order.
 */
import type { Type, types } from 'avsc';
import { MAX_INTEGER, longerThan, utf8Length } from './bounds';
import { decodeError } from './errors';
import type { DecodeError } from './errors';

type Path = readonly string[];

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

/** Compiled conformers, per limits, per type. */
const conformers = new WeakMap<FieldLimits, WeakMap<Type, Conformer>>();
const hasOwn = Object.prototype.hasOwnProperty;
const rejectAll: Conformer = () => REJECTED;

/**
 * `conform` and `findFirstError` in one pass over the value, for the per-event hot path: returns
 * exactly what `conform(type, value)` returns when `findFirstError` (with the same limits) would
 * find nothing, and `REJECTED` otherwise. It never explains: a rejected value goes through those
 * two functions for its precise error (or for its acceptance: the conformer may reject what it
 * cannot vouch for, e.g. types these schemas do not use, never accept what they would refuse).
 * The empty-turn rule (`limits.afterField`) is left to the caller.
 * test/unit/schema-conformer.test.ts compares the two on random input.
 */
export function compileConformer(type: Type, limits: FieldLimits = NO_LIMITS): Conformer {
  let cache = conformers.get(limits);
  if (cache === undefined) conformers.set(limits, (cache = new WeakMap()));
  const known = cache.get(type);
  if (known !== undefined) return known;
  // Registered before compiling, so a named type referring to itself compiles too.
  const late: { conform?: Conformer } = {};
  cache.set(type, (value) => (late.conform as Conformer)(value));
  const compiled = compileType(type, limits);
  late.conform = compiled;
  cache.set(type, compiled);
  return compiled;
}

function compileType(type: Type, limits: FieldLimits): Conformer {
  if (isRecordType(type)) return compileRecord(type, limits);
  if (isArrayType(type)) {
    const item = compileConformer(type.itemsType, limits);
    const max = limits.maxItems;
    return (value) => {
      if (!Array.isArray(value) || value.length > max) return REJECTED;
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
    const inner = compileConformer(only as Type, limits);
    return (value) => (value === null ? null : inner(value));
  }
  if (isEnumType(type)) {
    const symbols = new Set(type.symbols);
    return (value) => (typeof value === 'string' && symbols.has(value) ? value : REJECTED);
  }
  switch (type.typeName) {
    case 'long':
      // contract §3: an integer, never negative, at most 2^52 − 1; conform: -0 becomes 0.
      return (value) =>
        typeof value === 'number' && value >= 0 && value <= MAX_INTEGER && Number.isInteger(value)
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
/** A string field's conformer with its byte limit (contract §3, bounds). */
function limitedString(inner: Conformer, limit: number): Conformer {
  return (value) =>
    typeof value === 'string' && longerThan(value, limit) ? REJECTED : inner(value);
}

function compileRecord(type: types.RecordType, limits: FieldLimits): Conformer {
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
    const inner = compileConformer(field.type, limits);
    const limit = limits.strings[field.name];
    values.push(limit === undefined ? inner : limitedString(inner, limit));
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
    if (Number.isNaN(value)) return 'NaN';
    return `a number too large to represent (${value < 0 ? '-' : ''}1e400 or the like)`;
  }
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'string' && value.length > 60) {
    return `${JSON.stringify(value.slice(0, 56))}... (${value.length} characters)`;
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `field "tokens.end": <what>`, with `field` set to the rendered path. */
export function fieldError(code: DecodeError['code'], path: Path, what: string): DecodeError {
  const field = renderPath(path);
  return decodeError(code, `field "${field}": ${what}`, field);
}

/**
 * What the checks enforce beyond the schema's types (contract §3): the byte limit of string
 * fields by name and the item limit of arrays (bounds), and a rule run after a field's own checks
 * (an empty turn). Outputs are checked with none of these.
 */
export interface FieldLimits {
  /** Byte limit of a string field, by field name. */
  strings: Readonly<Record<string, number>>;
  /** Items an array field may hold. */
  maxItems: number;
  /** Checked after a record field passed its own checks, in field order. */
  afterField?: (
    record: string,
    field: string,
    value: unknown,
    path: Path,
  ) => DecodeError | undefined;
}

const NO_LIMITS: FieldLimits = { strings: {}, maxItems: Number.POSITIVE_INFINITY };

/** Does the value have the JSON kind the type wants (the one check `WRONG_TYPE` names)? */
function hasKind(type: Type, value: unknown): boolean {
  switch (type.typeName) {
    case 'record':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'enum':
    case 'string':
      return typeof value === 'string';
    case 'long':
    case 'int':
    case 'double':
    case 'float':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return type.isValid(value);
  }
}

/** The checks of an integer field (contract §3), in order: an integer, at most 2^52 − 1, ≥ 0. */
function integerError(value: number, path: Path): DecodeError | undefined {
  // ±Infinity (JSON 1e400) is an integer too large to represent; a fraction is not an integer.
  if (Number.isNaN(value) || (Number.isFinite(value) && !Number.isInteger(value))) {
    return fieldError('NOT_AN_INTEGER', path, `expected an integer, got ${describeValue(value)}`);
  }
  if (value > MAX_INTEGER) {
    const what = `expected an integer at most ${MAX_INTEGER} (2^52 − 1), got ${describeValue(value)}`;
    return fieldError('NUMBER_TOO_LARGE', path, what);
  }
  if (value < 0) {
    return fieldError(
      'NEGATIVE_NUMBER',
      path,
      `expected a non-negative integer, got ${describeValue(value)}`,
    );
  }
  return undefined;
}

function stringError(
  value: string,
  path: Path,
  limit: number | undefined,
): DecodeError | undefined {
  if (limit === undefined || !longerThan(value, limit)) return undefined;
  const what = `${utf8Length(value)} bytes in UTF-8, more than the ${limit} allowed`;
  return fieldError('TOO_LONG', path, what);
}

/**
 * The first problem of `value` against `type`, field by field in schema order, each field with
 * the first check it fails (contract §3): missing, wrong type, not in its enum, not an integer,
 * too large, negative, too long; a record's fields before its own rule (a reversed range), and
 * `limits.afterField` after each field. Undefined when valid. Absent fields take their schema
 * default (contract §3: fields with a default may be absent). Never throws on JSON-like input:
 * every value is looked at by its own kind, never used as a property key.
 */
export function findFirstError(
  type: Type,
  value: unknown,
  limits: FieldLimits = NO_LIMITS,
  path: Path = [],
  fieldName = '',
): DecodeError | undefined {
  if (isUnionType(type)) {
    if (value === null && type.types.some((t) => t.typeName === 'null')) return undefined;
    const branch = type.types.find((t) => t.typeName !== 'null' && hasKind(t, value));
    if (branch === undefined) {
      return fieldError(
        'WRONG_TYPE',
        path,
        `expected ${describeType(type)}, got ${describeValue(value)}`,
      );
    }
    return findFirstError(branch, value, limits, path, fieldName);
  }
  if (!hasKind(type, value)) {
    return fieldError(
      'WRONG_TYPE',
      path,
      `expected ${describeType(type)}, got ${describeValue(value)}`,
    );
  }
  if (isRecordType(type)) return recordError(type, value as Record<string, unknown>, limits, path);
  if (isArrayType(type)) {
    const items = value as unknown[];
    if (items.length > limits.maxItems) {
      const what = `${items.length} items, more than the ${limits.maxItems} allowed`;
      return fieldError('TOO_LONG', path, what);
    }
    for (let i = 0; i < items.length; i++) {
      const error = findFirstError(
        type.itemsType,
        items[i],
        limits,
        [...path, String(i)],
        fieldName,
      );
      if (error) return error;
    }
    return undefined;
  }
  if (isEnumType(type)) {
    if (type.symbols.includes(value as string)) return undefined;
    return fieldError(
      'BAD_ENUM',
      path,
      `expected ${describeType(type)}, got ${describeValue(value)}`,
    );
  }
  if (type.typeName === 'long') return integerError(value as number, path);
  if (type.typeName === 'string')
    return stringError(value as string, path, limits.strings[fieldName]);
  return type.isValid(value)
    ? undefined
    : fieldError('WRONG_TYPE', path, `expected ${describeType(type)}, got ${describeValue(value)}`);
}

function recordError(
  type: types.RecordType,
  value: Record<string, unknown>,
  limits: FieldLimits,
  path: Path,
): DecodeError | undefined {
  for (const field of type.fields) {
    const own = ownField(value, field.name);
    const given: unknown = own === undefined ? field.defaultValue() : own;
    const at = [...path, field.name];
    if (given === undefined) {
      const what = `required field is missing (expected ${describeType(field.type)})`;
      return fieldError('MISSING_FIELD', at, what);
    }
    const error =
      findFirstError(field.type, given, limits, at, field.name) ??
      limits.afterField?.(shortTypeName(type), field.name, given, at);
    if (error) return error;
  }
  return findReversedRange(type, value, path);
}

/** Every check of `findFirstError`, without the input bounds: for output records. */
export function findInvalid(type: Type, value: unknown): DecodeError | undefined {
  return findFirstError(type, value);
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
