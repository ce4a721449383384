/**
 * Texts the processor copies out of a record (into a dead letter's headers, a message, a log
 * line) are capped: a record may hold a key or an id of hundreds of kilobytes, and a copy of it
 * in every header would make the dead letter too large for its topic (the broker refuses it on
 * every retry). Pure.
 */

/** The longest header text a dead letter carries (`cg.error.message`), in UTF-8 bytes. */
export const MAX_HEADER_TEXT_BYTES = 1024;

/** How much of a key or id a message quotes, in UTF-16 code units. */
export const MAX_QUOTED_CHARS = 200;

/**
 * `text` if its UTF-8 encoding has at most `maxBytes` bytes, else its longest prefix that fits
 * with a note of the whole length, cut at a character boundary (never half a character).
 */
export function capText(text: string, maxBytes = MAX_HEADER_TEXT_BYTES): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  const note = `… (${bytes} bytes in all)`;
  const room = Math.max(0, maxBytes - Buffer.byteLength(note));
  const utf8 = Buffer.from(text);
  let end = room;
  // Back to the start of a character: continuation bytes are 0b10xxxxxx.
  while (end > 0 && (utf8[end]! & 0xc0) === 0x80) end--;
  return utf8.subarray(0, end).toString('utf8') + note;
}

/**
 * A key or id for a message: as a JSON string literal when short, else its first
 * `MAX_QUOTED_CHARS` characters and its length (null: `null`).
 */
export function quoted(text: string | null): string {
  if (text === null) return 'null';
  if (text.length <= MAX_QUOTED_CHARS) return JSON.stringify(text);
  let head = text.slice(0, MAX_QUOTED_CHARS);
  // Not half a surrogate pair: JSON.stringify would write it as an escape of a lone surrogate.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${JSON.stringify(head)}… (${text.length} characters)`;
}

/**
 * A record's key (bytes) for a message, as `quoted` shows its UTF-8 text; a key over
 * 4 × `MAX_QUOTED_CHARS` bytes by the first `MAX_QUOTED_CHARS` characters of its first bytes and
 * its length in bytes, so that only those are decoded however long the key (a record key may
 * hold up to the broker's record limit, ~1 MB).
 */
export function quotedKey(key: Buffer | null): string {
  if (key === null) return 'null';
  const limit = 4 * MAX_QUOTED_CHARS;
  if (key.length <= limit) return quoted(key.toString('utf8'));
  let head = key.subarray(0, limit).toString('utf8').slice(0, MAX_QUOTED_CHARS);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${JSON.stringify(head)}… (${key.length} bytes)`;
}
