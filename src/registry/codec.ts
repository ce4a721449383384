/**
 * Avro in the Confluent wire format (magic 0, 4-byte schema id, body) through a Schema
 * Registry: our schemas registered under TopicNameStrategy subjects (`<topic>-value`) with
 * BACKWARD compatibility; writers' schemas fetched by id and resolved to ours.
 * A registry that cannot be reached is a transient error (`RegistryUnavailableError`: the
 * batch is retried), never a dead letter; an unknown or foreign schema id is a dead letter.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Type } from 'avsc';
import type { ContextEvent } from '../engine/events';
import type { AuditRecord, SpillRequest, Verdict } from '../engine/outputs';
import { type DecodeResult, decodeEventAvro, encodeEventAvro } from '../schema/decodeEvent';
import {
  auditRecordType,
  parseEventSchema,
  rawSchemas,
  spillRequestType,
  verdictType,
} from '../schema/schemas';
import { decodeError } from '../schema/errors';

export class RegistryUnavailableError extends Error {
  readonly code = 'REGISTRY_UNAVAILABLE';
}

export interface SubjectTopics {
  inputTopic: string;
  verdictTopic: string;
  spillTopic: string;
  auditTopic: string;
}

const MAGIC = 0;

export interface BasicAuth {
  username: string;
  password: string;
}

/**
 * Registers a top-level union schema (the event schema: one record per event type, the
 * Confluent "several event types in one topic" pattern) through the registry's REST API:
 * @kafkajs/confluent-schema-registry's `register` refuses schemas without a name.
 */
async function registerUnion(url: string, subject: string, schema: string, auth?: BasicAuth): Promise<number> {
  const headers: Record<string, string> = { 'Content-Type': 'application/vnd.schemaregistry.v1+json' };
  if (auth) headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const base = `${url}/subjects/${encodeURIComponent(subject)}`;
  const config = await fetch(`${url}/config/${encodeURIComponent(subject)}`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ compatibility: 'BACKWARD' }),
  });
  if (!config.ok) throw new Error(`PUT config: HTTP ${config.status} ${await config.text()}`);
  const res = await fetch(`${base}/versions`, { method: 'POST', headers, body: JSON.stringify({ schema, schemaType: 'AVRO' }) });
  const body = (await res.json().catch(() => ({}))) as { id?: number; message?: string };
  if (!res.ok || typeof body.id !== 'number') throw new Error(`POST versions: HTTP ${res.status} ${body.message ?? ''}`);
  return body.id;
}

export function withHeader(schemaId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(MAGIC, 0);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, body]);
}

/** A failed registry call: 404 means the id does not exist; anything else is transient. */
function isNotFound(e: unknown): boolean {
  const status = (e as { status?: number }).status;
  return status === 404 || /not found/i.test(String((e as Error).message));
}

export class RegistryCodec {
  private readonly ids = new Map<string, number>();
  private readonly writers = new Map<number, Type | Error>();

  constructor(
    readonly registry: SchemaRegistry,
    private readonly topics: SubjectTopics,
    private readonly url: string,
    private readonly auth?: BasicAuth,
  ) {}

  static connect(url: string, topics: SubjectTopics, auth?: BasicAuth): RegistryCodec {
    const registry = new SchemaRegistry(
      { host: url, auth: auth as never, retry: { retries: 2 } },
      { [SchemaType.AVRO]: { wrapUnions: true } },
    );
    return new RegistryCodec(registry, topics, url, auth);
  }

  /** Registers the four schemas (idempotent: an identical schema keeps its id). */
  async registerAll(): Promise<void> {
    const eventSubject = `${this.topics.inputTopic}-value`;
    try {
      this.ids.set(eventSubject, await registerUnion(this.url, eventSubject, rawSchemas.contextChangeEvent, this.auth));
    } catch (e) {
      throw new RegistryUnavailableError(`registering ${eventSubject}: ${(e as Error).message}`);
    }
    const subjects: [string, string][] = [
      [`${this.topics.verdictTopic}-value`, rawSchemas.verdict],
      [`${this.topics.spillTopic}-value`, rawSchemas.spillRequest],
      [`${this.topics.auditTopic}-value`, rawSchemas.auditRecord],
    ];
    for (const [subject, schema] of subjects) {
      try {
        const { id } = await this.registry.register(
          { type: SchemaType.AVRO, schema },
          { subject, compatibility: COMPATIBILITY.BACKWARD },
        );
        this.ids.set(subject, id);
      } catch (e) {
        if (isNotFound(e)) throw e;
        throw new RegistryUnavailableError(`registering ${subject}: ${(e as Error).message}`);
      }
    }
  }

  private idFor(topic: string): number {
    const id = this.ids.get(`${topic}-value`);
    if (id === undefined) throw new Error(`schema for ${topic} not registered: call registerAll() first`);
    return id;
  }

  encodeVerdict(v: Verdict): Buffer {
    return withHeader(this.idFor(this.topics.verdictTopic), verdictType.toBuffer(v));
  }

  encodeSpillRequest(r: SpillRequest): Buffer {
    return withHeader(this.idFor(this.topics.spillTopic), spillRequestType.toBuffer(r));
  }

  encodeAudit(a: AuditRecord): Buffer {
    return withHeader(this.idFor(this.topics.auditTopic), auditRecordType.toBuffer(a));
  }

  /** For producers (the simulator, tests). */
  encodeEvent(e: ContextEvent): Buffer {
    return withHeader(this.idFor(this.topics.inputTopic), encodeEventAvro(e));
  }

  /** The writer's event schema by id: an Error value when the id is unknown or not an event schema. */
  private async writerType(id: number): Promise<Type | Error> {
    const cached = this.writers.get(id);
    if (cached !== undefined) return cached;
    let schema: Type;
    try {
      schema = (await this.registry.getSchema(id)) as unknown as Type;
    } catch (e) {
      if (!isNotFound(e)) throw new RegistryUnavailableError(`fetching schema ${id}: ${(e as Error).message}`);
      const missing = new Error(`schema id ${id} is not in the registry`);
      this.writers.set(id, missing);
      return missing;
    }
    let result: Type | Error;
    try {
      result = parseEventSchema(JSON.stringify(schema.schema())).union;
    } catch (e) {
      result = new Error(`schema id ${id} is not a context-change event schema: ${(e as Error).message}`);
    }
    this.writers.set(id, result);
    return result;
  }

  /** A wire-format Avro value; throws RegistryUnavailableError only when the registry is down. */
  async decodeEvent(buf: Buffer): Promise<DecodeResult> {
    if (buf.length < 5 || buf[0] !== MAGIC) {
      return { ok: false, error: decodeError('AVRO_DECODE', 'not the Confluent wire format: expected magic byte 0 and a 4-byte schema id') };
    }
    const id = buf.readInt32BE(1);
    const writer = await this.writerType(id);
    if (writer instanceof Error) return { ok: false, error: decodeError('AVRO_DECODE', writer.message) };
    return decodeEventAvro(buf.subarray(5), writer);
  }
}
