/**
 * A 53-bit string hash (two 32-bit multiply-xorshift lanes), so remembered eventIds and
 * stored requestIds cost 8 bytes each instead of the whole string (contract §4: memory stays
 * O(pins + ranges)). A collision needs the same session, a seq within the 32 remembered, and
 * two ids agreeing on 53 bits: about 1 in 10^15 per comparison.
 */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
