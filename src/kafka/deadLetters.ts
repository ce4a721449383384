/**
 * Dead letters (contract §6): the original key and value bytes with headers naming the error,
 * the source topic, partition and offset. One that would not fit the DLQ topic's
 * `max.message.bytes` (a record near the input topic's limit plus the headers, or a DLQ topic
 * with a lower limit) keeps a prefix of its value, then of its key, and says so in headers with
 * the original's length and sha256, so it can still be matched to the input record.
 */
import { createHash } from 'node:crypto';
import type { RecordHeaders, OutRecord } from './transport';
import { capText } from './boundedText';
import { estimatedBytes } from './outputChunks';
import { RECORD_MARGIN, fits } from './recordLimits';
import type { DeadLetterCode, RawRecord } from './records';

export interface DeadLetterSource {
  topic: string;
  partition: number;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The dead letter of `r`, within `limit` bytes (the DLQ topic's `max.message.bytes`). */
export function deadLetter(
  r: RawRecord,
  source: DeadLetterSource,
  code: DeadLetterCode,
  message: string,
  limit: number,
): OutRecord {
  const headers: RecordHeaders = {
    'cg.error.code': code,
    'cg.error.message': capText(message),
    'cg.source.topic': capText(source.topic),
    'cg.source.partition': String(source.partition),
    'cg.source.offset': r.offset,
  };
  const whole: OutRecord = { key: r.key, value: r.value, headers };
  return fits(whole, limit) ? whole : truncated(r, headers, limit);
}

/** What `fits` leaves for key and value once the headers are counted. */
function roomBesidesHeaders(headers: RecordHeaders, limit: number): number {
  return limit - RECORD_MARGIN - estimatedBytes({ key: null, value: null, headers });
}

/** The value cut first (to nothing if need be), then the key; each cut one named in headers. */
function truncated(r: RawRecord, headers: RecordHeaders, limit: number): OutRecord {
  const key = r.key ?? Buffer.alloc(0);
  const value = r.value ?? Buffer.alloc(0);
  const cut = (what: 'key' | 'value', b: Buffer) => {
    headers[`cg.original.${what}.length`] = String(b.length);
    headers[`cg.original.${what}.sha256`] = sha256(b);
  };
  headers['cg.truncated'] = 'value';
  cut('value', value);
  let room = roomBesidesHeaders(headers, limit);
  if (key.length <= room) {
    return { key: r.key, value: value.subarray(0, room - key.length), headers };
  }
  headers['cg.truncated'] = 'key,value';
  cut('key', key);
  room = Math.max(0, roomBesidesHeaders(headers, limit));
  return { key: key.subarray(0, room), value: Buffer.alloc(0), headers };
}
