/**
 * Reads the processor's Avro outputs back (verdicts, spill requests, audit records) for the
 * on-call tools: the writer's schema by the id in the Confluent header, resolved to this
 * version's schema, so records written by an older or newer processor still read.
 */
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Type, type types } from 'avsc';
import type { AuditRecord, SpillRequest, Verdict } from '../engine/outputs';
import { auditRecordType, spillRequestType, verdictType } from '../schema/schemas';

export type OutputKind = 'verdict' | 'spill-request' | 'audit';

export type DecodedOutput =
  | { record: 'verdict'; value: Verdict }
  | { record: 'spill-request'; value: SpillRequest }
  | { record: 'audit'; value: AuditRecord };

const READERS: Readonly<Record<OutputKind, types.RecordType>> = {
  verdict: verdictType,
  'spill-request': spillRequestType,
  audit: auditRecordType,
};

export class OutputDecoder {
  private readonly resolvers = new Map<string, ReturnType<Type['createResolver']>>();

  constructor(private readonly registry: Pick<SchemaRegistry, 'getSchema'>) {}

  /** Throws with the offset of the problem: a record that is not ours is worth a clear line. */
  async decode(kind: OutputKind, buf: Buffer): Promise<DecodedOutput> {
    if (buf.length < 5 || buf[0] !== 0)
      throw new Error(
        `not the Confluent wire format (expected magic byte 0 and a 4-byte schema id, got ${buf.length} bytes starting ${buf.subarray(0, 5).toString('hex')})`,
      );
    const id = buf.readInt32BE(1);
    const reader = READERS[kind];
    const key = `${kind}:${id}`;
    let resolver = this.resolvers.get(key);
    if (resolver === undefined) {
      const schema = (await this.registry.getSchema(id)) as unknown as Type;
      const writer = Type.forSchema(schema.schema() as Parameters<typeof Type.forSchema>[0], {
        wrapUnions: 'never',
      });
      resolver = reader.createResolver(writer);
      this.resolvers.set(key, resolver);
    }
    // Plain objects (avsc returns instances of generated classes): what JSON and tests expect.
    const value = JSON.parse(JSON.stringify(reader.fromBuffer(buf.subarray(5), resolver)));
    return { record: kind, value } as DecodedOutput;
  }
}
