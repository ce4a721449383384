/**
 * Avro in the Confluent wire format (magic 0, 4-byte schema id, body) through a Schema
 * Registry: our schemas registered under TopicNameStrategy subjects (`<topic>-value`) with
 * BACKWARD compatibility; writers' schemas fetched by id and resolved to ours.
 * A registry that cannot be reached is a transient error (`RegistryUnavailableError`: the
 * batch is retried), never a dead letter; an unknown or foreign schema id is a dead letter.
 * Writers' schemas are fetched by our own REST call (src/registry/rest.ts), so that every
 * answer is classified, and kept in a bounded LRU cache, unknown ids included.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { TimeoutMiddleware } from 'mappersmith/middleware/timeout';
import type { Agent as HttpsAgent } from 'node:https';
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
import { Lru } from './lru';
import { RegistrySchemaRefusedError, registryAnswerStatus, schemaRefusal } from './schemaRefusal';
import {
  authFailure,
  type BasicAuth,
  REGISTRY_TIMEOUT_MS,
  RegistryAuthError,
  registryAgent,
  RegistryRest,
  type RegistryTls,
  RegistryUnavailableError,
} from './rest';
import { readWireHeader, withHeader } from './wireFormat';

/** What the codec's calls throw when the registry cannot answer, or refuses our credentials. */
export { RegistryAuthError, RegistryUnavailableError } from './rest';

export interface SubjectTopics {
  inputTopic: string;
  verdictTopic: string;
  spillTopic: string;
  auditTopic: string;
}

/**
 * A failed registry call: HTTP 404 means the id (or subject) does not exist; anything else is
 * transient. @kafkajs/confluent-schema-registry rejects every non-2xx answer with its
 * ResponseError, which carries the HTTP `status`; a failure without one (a refused connection,
 * a timeout) never reached an answer.
 */
function isNotFound(e: unknown): boolean {
  return (e as { status?: unknown } | null)?.status === 404;
}

/** Writers' schemas (or why an id has none) kept at most, least recently used out first. */
export const WRITER_CACHE_SIZE = 1_000;

export class RegistryCodec {
  private readonly ids = new Map<string, number>();
  private readonly writers = new Lru<number, Type | Error>(WRITER_CACHE_SIZE);

  constructor(
    readonly registry: SchemaRegistry,
    private readonly topics: SubjectTopics,
    private readonly rest: RegistryRest,
    private readonly auth?: BasicAuth,
    private readonly agent?: HttpsAgent,
  ) {}

  /** Writers' schemas (and unknown ids) cached now (tests). */
  get cachedWriters(): number {
    return this.writers.size;
  }

  /** `tls.caFile`: trust that CA for an https registry (both for our calls and the library's). */
  static connect(
    url: string,
    topics: SubjectTopics,
    auth?: BasicAuth,
    tls?: RegistryTls,
    timeoutMs: number = REGISTRY_TIMEOUT_MS,
  ): RegistryCodec {
    const agent = registryAgent(url, tls);
    const registry = new SchemaRegistry(
      {
        host: url,
        auth: auth as never,
        retry: { retries: 2 },
        middlewares: [TimeoutMiddleware(timeoutMs)],
        ...(agent ? { agent } : {}),
      },
      { [SchemaType.AVRO]: { wrapUnions: true } },
    );
    const rest = new RegistryRest(url, auth, agent, timeoutMs);
    return new RegistryCodec(registry, topics, rest, auth, agent);
  }

  /** The registry settings of a Config (basic auth when both username and password are set). */
  static fromConfig(
    c: SubjectTopics & {
      registryUrl: string | null;
      registryUsername: string | null;
      registryPassword: string | null;
      registryCa: string | null;
    },
  ): RegistryCodec {
    if (c.registryUrl === null) throw new Error('SCHEMA_REGISTRY_URL is not set');
    const auth =
      c.registryUsername !== null && c.registryPassword !== null
        ? { username: c.registryUsername, password: c.registryPassword }
        : undefined;
    return RegistryCodec.connect(c.registryUrl, c, auth, { caFile: c.registryCa });
  }

  /** Closes kept-alive registry connections (tests, shutdown). */
  close(): void {
    this.agent?.destroy();
  }

  /** Registers the four schemas (idempotent: an identical schema keeps its id). */
  async registerAll(): Promise<void> {
    const eventSubject = `${this.topics.inputTopic}-value`;
    try {
      this.ids.set(
        eventSubject,
        await this.rest.registerUnion(eventSubject, rawSchemas.contextChangeEvent),
      );
    } catch (e) {
      if (e instanceof RegistryAuthError || e instanceof RegistrySchemaRefusedError) throw e;
      throw new RegistryUnavailableError(`registering ${eventSubject}: ${(e as Error).message}`);
    }
    const subjects: [string, string][] = [
      [`${this.topics.verdictTopic}-value`, rawSchemas.verdict],
      [`${this.topics.spillTopic}-value`, rawSchemas.spillRequest],
      [`${this.topics.auditTopic}-value`, rawSchemas.auditRecord],
    ];
    for (const [subject, schema] of subjects) {
      try {
        await this.rest.putBackwardCompatibility(subject);
        const { id } = await this.registry.register(
          { type: SchemaType.AVRO, schema },
          { subject, compatibility: COMPATIBILITY.BACKWARD },
        );
        this.ids.set(subject, id);
      } catch (e) {
        if (e instanceof RegistryAuthError) throw e;
        if (isNotFound(e)) throw e;
        const status = (e as { status?: number }).status;
        if (status === 401 || status === 403)
          throw authFailure(status, `registering ${subject}`, this.auth);
        const message = (e as Error).message;
        const answered = registryAnswerStatus(e as Error);
        throw (
          schemaRefusal(this.rest.url, subject, answered, message) ??
          new RegistryUnavailableError(
            answered === undefined && status !== undefined
              ? `registering ${subject}: no answer of the registry's own (${message})`
              : `registering ${subject}: ${message}`,
          )
        );
      }
    }
  }

  private idFor(topic: string): number {
    const id = this.ids.get(`${topic}-value`);
    if (id === undefined)
      throw new Error(`schema for ${topic} not registered: call registerAll() first`);
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

  /**
   * Why the registry is unusable right now, or null: set by a failed schema fetch, cleared by the
   * next answer. Input that needs an unknown schema waits meanwhile, so /readyz reports it.
   */
  unavailable: string | null = null;

  /** The writer's event schema by id: an Error value when the id is unknown or not an event schema. */
  private async writerType(id: number): Promise<Type | Error> {
    const cached = this.writers.get(id);
    if (cached !== undefined) return cached;
    const answer = await this.fetchSchema(id);
    let result: Type | Error;
    if (answer instanceof Error) result = answer;
    else {
      try {
        result = parseEventSchema(answer.schema).union;
      } catch (e) {
        result = new Error(
          `schema id ${id} is not a context-change event schema: ${(e as Error).message}`,
        );
      }
    }
    this.writers.set(id, result);
    return result;
  }

  /** The writer's schema by id; throws RegistryUnavailableError (and says so) when it must wait. */
  private async fetchSchema(id: number): Promise<{ schema: string } | Error> {
    const answer = await this.rest.schemaById(id);
    if (!(answer instanceof Error) && 'unavailable' in answer) {
      this.unavailable = `schema registry unreachable while fetching schema ${id}: ${answer.unavailable}`;
      throw new RegistryUnavailableError(this.unavailable);
    }
    this.unavailable = null;
    return answer;
  }

  /** A wire-format Avro value; throws RegistryUnavailableError only when the registry is down. */
  async decodeEvent(buf: Buffer): Promise<DecodeResult> {
    const wire = readWireHeader(buf);
    if (wire === null) {
      return {
        ok: false,
        error: decodeError(
          'AVRO_DECODE',
          'not the Confluent wire format: expected magic byte 0 and a 4-byte schema id',
        ),
      };
    }
    const writer = await this.writerType(wire.schemaId);
    if (writer instanceof Error)
      return { ok: false, error: decodeError('AVRO_DECODE', writer.message) };
    return decodeEventAvro(wire.body, writer);
  }
}
