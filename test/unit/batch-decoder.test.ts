/**
 * The decoder of a batch's input records (src/kafka/batch/decoder.ts): a record becomes a
 * decoded event or a dead letter, whatever the decoding throws; its one failure is its own
 * error, DecoderUnavailableError, when the registry cannot be reached (the planner turns it
 * into the partition's BeforeTransactionError: test/unit/batch-planner.test.ts "planBatch
 * before its transaction").
 */
import { DecoderUnavailableError, decodeForBatch } from '../../src/kafka/batch/decoder';
import type { DecodedRecord } from '../../src/kafka/records';
import { RegistryUnavailableError, type RegistryCodec } from '../../src/registry/codec';

describe('decodeForBatch', () => {
  const record = { key: Buffer.from('k'), value: Buffer.from([0, 0, 0, 0, 7, 1]), offset: '5' };
  const codecFailing = (e: unknown) =>
    ({ decodeEvent: () => Promise.reject(e) }) as unknown as RegistryCodec;

  it("waits (its own DecoderUnavailableError, the registry's error as its cause) only when the registry is unreachable", async () => {
    const down = new RegistryUnavailableError('down');
    const failure = await Promise.resolve(decodeForBatch(record, 'avro', codecFailing(down))).catch(
      (x: unknown) => x,
    );
    expect(failure).toBeInstanceOf(DecoderUnavailableError);
    expect((failure as DecoderUnavailableError).cause).toBe(down);
    expect((failure as DecoderUnavailableError).code).toBe('DECODER_UNAVAILABLE');
  });

  it('dead-letters anything else the decoding throws as DECODER_FAILED (a stack overflow too)', async () => {
    const overflow = new RangeError('Maximum call stack size exceeded');
    const d = (await decodeForBatch(record, 'avro', codecFailing(overflow))) as DecodedRecord;
    expect(d).toEqual({
      ok: false,
      code: 'DECODER_FAILED',
      message: expect.stringContaining('RangeError: Maximum call stack size exceeded'),
      answer: null,
    });
  });
});
