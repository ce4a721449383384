/**
 * The Confluent wire format: magic byte 0, the writer's schema id (4 bytes, big-endian), then
 * the Avro body. The one place that reads or writes its header.
 */

const MAGIC = 0;
const HEADER_BYTES = 5;

export interface WireRecord {
  schemaId: number;
  body: Buffer;
}

/** The header read off `buf`, or null when `buf` is not in the wire format at all. */
export function readWireHeader(buf: Buffer): WireRecord | null {
  if (buf.length < HEADER_BYTES || buf[0] !== MAGIC) return null;
  return { schemaId: buf.readInt32BE(1), body: buf.subarray(HEADER_BYTES) };
}

/** Why `buf` is not in the wire format, naming what it starts with. */
export function notWireFormat(buf: Buffer): string {
  return `not the Confluent wire format (expected magic byte 0 and a 4-byte schema id, got ${buf.length} bytes starting ${buf.subarray(0, HEADER_BYTES).toString('hex')})`;
}

export function withHeader(schemaId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(MAGIC, 0);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, body]);
}
