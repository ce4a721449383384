/**
 * Reads the processor's Avro outputs back (verdicts, spill requests, audit records) for the
 * on-call tools, so records written by an older or newer processor still read.
 */
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { types } from 'avsc';
import type { AuditRecord, SpillRequest, Verdict } from '../engine/outputs';
import { auditRecordType, spillRequestType, verdictType } from '../schema/schemas';
import { SchemaReaders } from './schemaReaders';

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
  private readonly readers: SchemaReaders;

  constructor(registry: Pick<SchemaRegistry, 'getSchema'>) {
    this.readers = new SchemaReaders(registry);
  }

  /** Throws naming what the bytes start with: a record that is not ours is worth a clear line. */
  async decode(kind: OutputKind, buf: Buffer): Promise<DecodedOutput> {
    const read = await this.readers.read<unknown>(READERS[kind], buf, kind);
    // Plain objects (avsc returns instances of generated classes): what JSON and tests expect.
    const value = JSON.parse(JSON.stringify(read));
    return { record: kind, value } as DecodedOutput;
  }
}
