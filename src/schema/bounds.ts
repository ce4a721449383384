/**
 * The bounds of contract §3 on every input record, so that no single record can exhaust
 * or stop the processor: nesting depth, identifier and text lengths, the number of pins, the
 * size of integers, and text that is not UTF-8 (an unpaired surrogate). The depth and surrogate
 * checks run on a JSON text without recursion, before anything else walks it.
 */

/** Levels of nesting a JSON record may have (the record itself is level 1). */
export const MAX_DEPTH = 32;
/** The largest integer any integer field may hold: 2^52 − 1 (sums like `turn + 1` stay exact). */
export const MAX_INTEGER = 4_503_599_627_370_495;
/** At most this many pins on one turn. */
export const MAX_PINS = 16;

/** Identifiers: at most 256 bytes in UTF-8. */
const ID_BYTES = 256;
/** A spillRequestId holds a sessionId and a requestId: at most 1,024 bytes. */
const SPILL_REQUEST_ID_BYTES = 1024;
/** Free text: at most 4,096 bytes. */
const TEXT_BYTES = 4096;

/**
 * The byte limit of each string field of the input events, by field name (contract §3). Every
 * string field of schemas/context-change-event.avsc is here but `type`, which must name an event
 * type (test/unit/schema-bounds.test.ts checks the list against the schema).
 */
export const STRING_LIMITS: Readonly<Record<string, number>> = {
  sessionId: ID_BYTES,
  eventId: ID_BYTES,
  requestId: ID_BYTES,
  keyId: ID_BYTES,
  spillRequestId: SPILL_REQUEST_ID_BYTES,
  by: TEXT_BYTES,
  reason: TEXT_BYTES,
  error: TEXT_BYTES,
  handle: TEXT_BYTES,
  value: TEXT_BYTES,
};

/** Bytes of `s` in UTF-8 (well-formed text: a surrogate pair is 4 bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Is `s` longer than `limit` bytes in UTF-8? Cheap for short strings (a code unit is ≤ 3 bytes). */
export function longerThan(s: string, limit: number): boolean {
  if (s.length * 3 <= limit) return false;
  if (s.length > limit) return true;
  return utf8Length(s) > limit;
}

/** `String.prototype.isWellFormed` (Node 20+; the TypeScript lib here predates its types). */
function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Where a UTF-16 string holds an unpaired surrogate, or -1. */
export function unpairedSurrogate(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

export type TextFinding =
  | { code: 'NOT_UTF8'; offset: number; what: string }
  | { code: 'TOO_DEEP'; offset: number; what: string };

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const OPEN_ARRAY = 91;
const CLOSE_OBJECT = 125;
const CLOSE_ARRAY = 93;
const LETTER_U = 117;

/** Count of `{` and `[` in the text, stopping past `limit`: a text with at most 32 opens is shallow. */
function opensUpTo(text: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0 && n <= limit; i = text.indexOf('{', i + 1)) n++;
  for (let i = text.indexOf('['); i >= 0 && n <= limit; i = text.indexOf('[', i + 1)) n++;
  return n;
}

function hexAt(text: string, i: number): number {
  const h = text.slice(i, i + 4);
  return /^[0-9a-fA-F]{4}$/.test(h) ? parseInt(h, 16) : -1;
}

/**
 * The first problem of a JSON text that must be found before it is parsed (contract §3, in its
 * order: not UTF-8, then too deep), or null. NOT_UTF8: an unpaired surrogate, written raw or as a
 * `\uD800`–`\uDFFF` escape with no partner. TOO_DEEP: an object or array opened at level 33.
 * One pass without recursion, in or out of strings as JSON has them (the text need not be valid
 * JSON: what is not JSON is found later, and these come first). The common record (no `\u`
 * escape, few brackets) is answered without the pass.
 */
export function scanJsonText(text: string): TextFinding | null {
  // Native check first (the common text is well formed); the walk only names where.
  const raw = isWellFormed(text) ? -1 : unpairedSurrogate(text);
  if (raw >= 0) {
    return { code: 'NOT_UTF8', offset: raw, what: 'an unpaired surrogate character' };
  }
  const escapes = text.indexOf('\\u') >= 0;
  if (!escapes && opensUpTo(text, MAX_DEPTH) <= MAX_DEPTH) return null;
  let depth = 0;
  let tooDeep = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === QUOTE) inString = false;
      else if (c === BACKSLASH) {
        if (text.charCodeAt(i + 1) === LETTER_U) {
          const length = unicodeEscape(text, i);
          if (length < 0)
            return { code: 'NOT_UTF8', offset: i, what: 'an unpaired surrogate escape' };
          i += length - 1;
        } else i++;
      }
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > MAX_DEPTH && tooDeep < 0) tooDeep = i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  if (tooDeep >= 0) {
    return { code: 'TOO_DEEP', offset: tooDeep, what: `nested more than ${MAX_DEPTH} levels deep` };
  }
  return null;
}

/**
 * The `\u` escape at `i`: its length in characters (6, or 12 for a surrogate pair), or -1 when
 * it is a surrogate without its partner.
 */
function unicodeEscape(text: string, i: number): number {
  const unit = hexAt(text, i + 2);
  if (unit < 0xd800 || unit > 0xdfff) return 6;
  if (unit >= 0xdc00) return -1; // a low surrogate first
  const next = text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === LETTER_U;
  const low = next ? hexAt(text, i + 8) : -1;
  return low >= 0xdc00 && low <= 0xdfff ? 12 : -1;
}

/**
 * The same checks on a value already in memory (the client hands objects, not text): an unpaired
 * surrogate in any string or key (NOT_UTF8) first, anywhere, then nesting deeper than 32
 * (TOO_DEEP; a cycle, which no JSON has, is nested without end). Iterative; an object shared by
 * several fields is walked once.
 */
export function scanValue(value: unknown): { code: 'NOT_UTF8' | 'TOO_DEEP'; what: string } | null {
  let tooDeep = false;
  const walked = new Set<object>();
  const onPath = new Set<object>();
  // Level -1 marks the end of an object's walk (it leaves the path).
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, level] = stack.pop()!;
    if (level === -1) {
      onPath.delete(v as object);
      continue;
    }
    if (typeof v === 'string') {
      if (!isWellFormed(v)) {
        return { code: 'NOT_UTF8', what: 'an unpaired surrogate in a string' };
      }
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (onPath.has(v)) tooDeep = true;
    if (walked.has(v)) continue;
    walked.add(v);
    onPath.add(v);
    if (level > MAX_DEPTH) tooDeep = true;
    stack.push([v, -1]);
    for (const key of Object.keys(v)) {
      if (!isWellFormed(key)) {
        return { code: 'NOT_UTF8', what: 'an unpaired surrogate in a key' };
      }
      stack.push([(v as Record<string, unknown>)[key], level + 1]);
    }
  }
  return tooDeep ? { code: 'TOO_DEEP', what: `nested more than ${MAX_DEPTH} levels deep` } : null;
}
