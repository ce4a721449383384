import fc from 'fast-check';
import { Type } from 'avsc';
import { notWireFormat, readWireHeader, withHeader } from '../../src/registry/wireFormat';
import { SchemaReaders } from '../../src/registry/schemaReaders';
import { verdictType } from '../../src/schema/schemas';
import type { Verdict } from '../../src/engine/outputs';

describe('the Confluent wire header', () => {
  it('reads back the schema id and body that withHeader wrote, for any id and body', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.uint8Array(), (id, b) => {
        const wire = readWireHeader(withHeader(id, Buffer.from(b)));
        expect(wire).not.toBeNull();
        expect(wire!.schemaId).toBe(id);
        expect(Buffer.compare(wire!.body, Buffer.from(b))).toBe(0);
      }),
    );
  });

  it('is absent from fewer than 5 bytes or a first byte other than 0', () => {
    expect(readWireHeader(Buffer.from([0, 0, 0, 1]))).toBeNull();
    expect(readWireHeader(Buffer.from('{"type":"TurnAppended"}'))).toBeNull();
    expect(readWireHeader(Buffer.alloc(0))).toBeNull();
  });

  it('names the length and first bytes of what is not in the wire format', () => {
    expect(notWireFormat(Buffer.from('{"a":1}'))).toBe(
      'not the Confluent wire format (expected magic byte 0 and a 4-byte schema id, got 7 bytes starting 7b2261223a)',
    );
  });
});

describe('SchemaReaders', () => {
  const verdict: Verdict = {
    sessionId: 's',
    requestId: 'c-1',
    decision: 'APPROVE',
    basis: 'INVARIANT_HOLDS',
    action: 'NONE',
    reasons: [],
    rulesChecked: [],
    diagnostic: null,
    spillRequestId: null,
    inputSeq: 3,
    requestEventId: null,
    requestedAt: null,
    decidedAt: 10,
    engineVersion: '2.0.0',
  };

  function registry() {
    const calls: number[] = [];
    return {
      calls,
      getSchema: async (id: number) => {
        calls.push(id);
        return Type.forSchema(verdictType.schema() as never);
      },
    };
  }

  it('fetches a writer schema once per id and reads records written with it', async () => {
    const r = registry();
    const readers = new SchemaReaders(r);
    const body = verdictType.toBuffer(verdict);
    for (let i = 0; i < 3; i++) {
      const read = await readers.read<Verdict>(verdictType, withHeader(7, body), 'verdict');
      expect(read.requestId).toBe('c-1');
    }
    expect(r.calls).toEqual([7]);
  });

  it('throws naming the record kind and the bytes when a record is not in the wire format', async () => {
    const readers = new SchemaReaders(registry());
    await expect(readers.read(verdictType, Buffer.from('{}'), 'verdict')).rejects.toThrow(
      /^verdict: not the Confluent wire format .*got 2 bytes starting 7b7d/,
    );
  });
});
