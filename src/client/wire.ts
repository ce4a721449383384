/**
 * Output records (contract §6) in the Confluent wire format: the writer's schema fetched from the
 * registry by id, resolved to this version's reader schema (BACKWARD evolution).
 */
import { Type, type types } from 'avsc';
import type { RegistryCodec } from '../registry/codec';

export class WireDecoder<T> {
  private readonly readers = new Map<number, (body: Buffer) => T>();

  constructor(
    private readonly codec: RegistryCodec,
    private readonly reader: types.RecordType,
    private readonly what: string,
  ) {}

  async decode(buf: Buffer): Promise<T> {
    if (buf.length < 5 || buf[0] !== 0)
      throw new Error(`${this.what}: expected the Confluent wire format (magic byte 0, schema id)`);
    const id = buf.readInt32BE(1);
    let read = this.readers.get(id);
    if (!read) {
      const writer = (await this.codec.registry.getSchema(id)) as unknown as Type;
      // The registry client parses with wrapped unions; our readers use unwrapped ones.
      const unwrapped = Type.forSchema(writer.schema() as never, { wrapUnions: 'never' });
      const resolver = this.reader.createResolver(unwrapped);
      read = (body) => this.reader.fromBuffer(body, resolver) as T;
      this.readers.set(id, read);
    }
    return read(buf.subarray(5));
  }
}
