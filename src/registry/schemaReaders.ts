/**
 * Reads wire-format records written with any registered version of one of our schemas, resolved
 * to this version's reader schema (BACKWARD evolution): the processor's outputs read back by the
 * client, the spill worker and the on-call tools. One cache of resolvers per (reader, writer id),
 * bounded, because a topic anyone can write to may name any schema id.
 */
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Type, type types } from 'avsc';
import { Lru } from './lru';
import { notWireFormat, readWireHeader } from './wireFormat';

const RESOLVER_CACHE_SIZE = 1_000;

type Read = (body: Buffer) => unknown;

export class SchemaReaders {
  private readonly reads = new Lru<string, Read>(RESOLVER_CACHE_SIZE);

  constructor(private readonly registry: Pick<SchemaRegistry, 'getSchema'>) {}

  /** `buf` decoded with `reader`; throws naming `what` when it is not a wire-format record. */
  async read<T>(reader: types.RecordType, buf: Buffer, what: string): Promise<T> {
    const wire = readWireHeader(buf);
    if (wire === null) throw new Error(`${what}: ${notWireFormat(buf)}`);
    const key = `${reader.name ?? ''}:${wire.schemaId}`;
    let read = this.reads.get(key);
    if (read === undefined) {
      const schema = (await this.registry.getSchema(wire.schemaId)) as unknown as Type;
      // The registry client parses with wrapped unions; our readers use unwrapped ones.
      const writer = Type.forSchema(schema.schema() as Parameters<typeof Type.forSchema>[0], {
        wrapUnions: 'never',
      });
      const resolver = reader.createResolver(writer);
      read = (body) => reader.fromBuffer(body, resolver);
      this.reads.set(key, read);
    }
    return read(wire.body) as T;
  }
}
