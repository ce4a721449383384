/**
 * The decoder of a batch's input records: each record becomes a decoded event, a malformed
 * request with its answer, or a dead letter (records.ts), and never throws for the record's
 * own sake. Its one failure is `DecoderUnavailableError`: the record cannot be decoded yet
 * (the registry holding its writer's schema is unreachable), which says nothing about the
 * record; the planner (planBatch.ts) turns it into the partition's "before the transaction".
 */
import { errorClass } from '../../errors';
import { RegistryUnavailableError, type RegistryCodec } from '../../registry/codec';
import type { PlanConfig } from './plan';
import {
  decodeRecord,
  decodeRecordNow,
  type DecodedRecord,
  type InputRoute,
  type RawRecord,
} from '../records';

/**
 * A record could not be decoded yet: the registry is unreachable (`cause`, its
 * RegistryUnavailableError). Reading the record again later is exact.
 */
export class DecoderUnavailableError extends errorClass(
  'DECODER_UNAVAILABLE',
  'DecoderUnavailableError',
) {}

/**
 * One record decoded: at once for JSON (no promise per record: it needs no registry), through
 * the registry for Avro; with `route`, a record not on the partition its key maps to is a
 * WRONG_PARTITION dead letter before its value is read. Throws (rejects with)
 * DecoderUnavailableError only when the record cannot be decoded yet (the registry is
 * unreachable). Anything else the decoding throws is the record's: a DECODER_FAILED dead
 * letter (a throw taken for an outage would hold the partition for good).
 */
export function decodeForBatch(
  m: RawRecord,
  format: PlanConfig['inputFormat'],
  codec: RegistryCodec,
  route?: InputRoute,
): DecodedRecord | Promise<DecodedRecord> {
  let now: DecodedRecord | undefined;
  try {
    now = decodeRecordNow(m, format, route);
  } catch (e) {
    return decoderThrew(e);
  }
  return now ?? decodeRecord(m, format, codec, route).catch(decoderThrew);
}

function decoderThrew(e: unknown): DecodedRecord {
  if (e instanceof RegistryUnavailableError)
    throw new DecoderUnavailableError(`the record cannot be decoded yet: ${e.message}`, {
      cause: e,
    });
  return {
    ok: false,
    code: 'DECODER_FAILED',
    message: `the decoder failed on this record (a compaction-guard bug; please report it with the record): ${describe(e)}`,
    answer: null,
  };
}

/** A thrown value as one line: its class and message. */
export const describe = (e: unknown) =>
  e instanceof Error ? `${e.name}: ${e.message}` : String(e);
