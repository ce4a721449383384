/**
 * What `JSON.parse` hides about a JSON text (contract §3 "not decodable"): a key given twice in
 * one object (JSON.parse keeps the last value silently, so which value counts is undefined:
 * fail closed), and bytes that are not valid UTF-8 (a decoder that replaces them would accept a
 * record the processor dead-letters).
 */

export interface DuplicateKey {
  /** The key as JSON.parse reads it (escapes resolved). */
  key: string;
  /** Where its second occurrence starts: the character offset of its opening quote. */
  offset: number;
  /** 1 for a key of the top-level object, 2 for one of an object inside it, and so on. */
  depth: number;
}

const QUOTE = 34; // "
const BACKSLASH = 92;
const COLON = 58;
const OPEN_OBJECT = 123; // {
const CLOSE_OBJECT = 125; // }
const OPEN_ARRAY = 91; // [
const CLOSE_ARRAY = 93; // ]

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The index of the quote that closes the string opened at `open`. */
function closingQuote(text: string, open: number): number {
  let i = open + 1;
  for (;;) {
    i = text.indexOf('"', i);
    if (i < 0) return text.length;
    // Escaped if preceded by an odd number of backslashes.
    let backslashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return i;
    i++;
  }
}

/** Is the string that closes at `close` an object key (followed by a colon)? */
function isKey(text: string, close: number): boolean {
  let k = close + 1;
  while (isJsonSpace(text.charCodeAt(k))) k++;
  return text.charCodeAt(k) === COLON;
}

/** Keys written in the text, over every object. */
function keysInText(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i >= 0;) {
    const close = closingQuote(text, i);
    if (isKey(text, close)) n++;
    i = text.indexOf('"', close + 1);
  }
  return n;
}

/** Keys JSON.parse kept, over every object (a duplicate is kept once). */
function keysInValue(value: object): number {
  let n = 0;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) n += keysInValue(item);
    return n;
  }
  for (const key in value) {
    n++;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null) n += keysInValue(item);
  }
  return n;
}

/** Colons anywhere in the text, inside strings too. */
function colonsIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) n++;
  return n;
}

/**
 * Every repeated key of a text that `JSON.parse` accepted as `parsed`, in text order (empty when
 * none). JSON.parse keeps one key per distinct name in an object, so some object repeats a key
 * exactly when the text has more keys than the value. The common case costs a walk of the value
 * and a count of colons: every key is followed by one, and outside strings only keys are, so
 * when the text has no more colons than the value has keys, no key was written twice. Otherwise
 * (a colon inside a string, or a repeat) the keys are counted properly, and only a real repeat
 * walks the text object by object to name it.
 */
export function findDuplicateKeys(text: string, parsed: unknown): DuplicateKey[] {
  if (typeof parsed !== 'object' || parsed === null) return [];
  const kept = keysInValue(parsed);
  if (colonsIn(text) === kept || keysInText(text) === kept) return [];
  return locateDuplicateKeys(text);
}

/** The walk: one set of keys per open object (arrays push a placeholder). */
function locateDuplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const open: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT) open.push(new Set());
    else if (c === OPEN_ARRAY) open.push(null);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) open.pop();
    else if (c === QUOTE) {
      const close = closingQuote(text, i);
      const keys = open[open.length - 1];
      if (keys && isKey(text, close)) {
        const key = JSON.parse(text.slice(i, close + 1)) as string;
        if (keys.has(key)) found.push({ key, offset: i, depth: open.length });
        keys.add(key);
      }
      i = close;
    }
  }
  return found;
}

/** The byte offset of the first byte that is not part of valid UTF-8, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const cont = bytes[i + k];
      if (cont === undefined || (cont & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (cont & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}
