/**
 * Text from input (session ids, request ids, error messages quoting a field) shown on a
 * terminal: control characters would be executed by it, not shown (an ESC sequence can
 * rewrite the screen or the window title), so they are written as visible escapes.
 */

/** C0 controls (but none of tab), DEL, C1 controls, and the bidirectional overrides. */
const UNPRINTABLE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}
