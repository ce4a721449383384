/**
 * Avro in the Confluent wire format (magic 0, 4-byte schema id, body) through a Schema
 * Registry: our schemas registered under TopicNameStrategy subjects (`<topic>-value`) with
 * BACKWARD compatibility; writers' schemas fetched by id and resolved to ours.
 * A registry that cannot be reached is a transient error (`RegistryUnavailableError`: the
 * batch is retried), never a dead letter; an unknown or foreign schema id is a dead letter.
 * Writers' schemas are fetched by this file's own REST call, so that every answer is classified
 * here (`classifySchemaAnswer`), and kept in a bounded LRU cache, unknown ids included.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { TimeoutMiddleware } from 'mappersmith/middleware/timeout';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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
import { errorClass } from '../errors';
import { Lru } from './lru';
import { RegistrySchemaRefusedError, schemaRefusal } from './schemaRefusal';
import { readWireHeader, withHeader } from './wireFormat';

/** One registry call failed (timeout, 5xx, connection): retriable. */
export class RegistryUnavailableError extends errorClass('REGISTRY_UNAVAILABLE') {}

/** 401/403 from the registry: retrying does not help, the credentials are wrong. */
export class RegistryAuthError extends errorClass('REGISTRY_AUTH_FAILED') {}

export interface SubjectTopics {
  inputTopic: string;
  verdictTopic: string;
  spillTopic: string;
  auditTopic: string;
}

export interface BasicAuth {
  username: string;
  password: string;
}

export interface RegistryTls {
  /** PEM file of the CA(s) for an https registry. */
  caFile: string | null;
}

export interface HttpResult {
  status: number;
  text: string;
}

/**
 * No registry call may wait forever: a request the registry accepted but never answers would
 * hold its batch, and with it the partition and a clean shutdown (seen once in the fault
 * suite: a batch stuck on a schema lookup, stop() waiting for it). Both clients, this file's
 * own REST calls and @kafkajs/confluent-schema-registry's (mappersmith, no timeout by
 * default), give up after this long; the failure then takes the "registry unavailable" path
 * (the batch is retried, /readyz says why).
 */
export const REGISTRY_TIMEOUT_MS = 15_000;

/**
 * One registry REST call over node:http(s), so that the same https.Agent (with the configured
 * CA) serves it and @kafkajs/confluent-schema-registry's calls. (Node's fetch, undici, takes no
 * https.Agent; a global undici dispatcher would change every other fetch in the process.)
 */
function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
  agent?: HttpsAgent,
  timeoutMs = REGISTRY_TIMEOUT_MS,
): Promise<HttpResult> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      u,
      {
        method,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
        ...(agent && u.protocol === 'https:' ? { agent } : {}),
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${u.origin}${u.pathname}: no answer in ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

function authFailure(status: number, what: string, auth?: BasicAuth): RegistryAuthError {
  return new RegistryAuthError(
    `${what}: HTTP ${status} from the schema registry (${auth ? `basic auth as ${JSON.stringify(auth.username)} rejected` : 'no credentials configured'}) ` +
      '- check CG_REGISTRY_USERNAME and CG_REGISTRY_PASSWORD',
  );
}

/**
 * Registers a top-level union schema (the event schema: one record per event type, the
 * Confluent "several event types in one topic" pattern) through the registry's REST API:
 * @kafkajs/confluent-schema-registry's `register` refuses schemas without a name.
 */
function registryHeaders(auth?: BasicAuth): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/vnd.schemaregistry.v1+json',
  };
  if (auth)
    headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return headers;
}

/**
 * Sets the subject's compatibility level to BACKWARD before any registration. The client
 * library sets it only after the first registration of a new subject, so an attempt cut off
 * in between left the subject at the registry's default, and every retry then failed with
 * "Compatibility does not match the configuration (BACKWARD != NONE)" (seen once in CI).
 */
async function putBackwardCompatibility(
  url: string,
  subject: string,
  auth?: BasicAuth,
  agent?: HttpsAgent,
): Promise<void> {
  const config = await call(
    `${url}/config/${encodeURIComponent(subject)}`,
    'PUT',
    registryHeaders(auth),
    JSON.stringify({ compatibility: 'BACKWARD' }),
    agent,
  );
  if (config.status === 401 || config.status === 403)
    throw authFailure(config.status, 'PUT config', auth);
  if (config.status < 200 || config.status >= 300)
    throw new Error(`PUT config: HTTP ${config.status} ${config.text}`);
}

async function registerUnion(
  url: string,
  subject: string,
  schema: string,
  auth?: BasicAuth,
  agent?: HttpsAgent,
): Promise<number> {
  const headers = registryHeaders(auth);
  const base = `${url}/subjects/${encodeURIComponent(subject)}`;
  await putBackwardCompatibility(url, subject, auth, agent);
  const res = await call(
    `${base}/versions`,
    'POST',
    headers,
    JSON.stringify({ schema, schemaType: 'AVRO' }),
    agent,
  );
  if (res.status === 401 || res.status === 403)
    throw authFailure(res.status, 'POST versions', auth);
  let body: { id?: number; message?: string } = {};
  try {
    body = JSON.parse(res.text) as typeof body;
  } catch {
    // not JSON: reported below with the status
  }
  const refused = schemaRefusal(url, subject, res.status, body.message ?? res.text.slice(0, 300));
  if (refused !== null) throw refused;
  if (res.status < 200 || res.status >= 300 || typeof body.id !== 'number')
    throw new Error(`POST versions: HTTP ${res.status} ${body.message ?? ''}`);
  return body.id;
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

/**
 * Statuses that say nothing about the id, only that the registry cannot answer us now: wrong or
 * expired credentials (401, 403, 407: every Avro record would fail alike, and dead-lettering
 * them all would lose the stream to a credentials rotation), a timeout (408), rate limiting
 * (429). Like 5xx, they wait.
 */
const WAITING_4XX: ReadonlySet<number> = new Set([401, 403, 407, 408, 429]);

/**
 * What an answer to GET /schemas/ids/{id} means: the schema text; an Error value for an id that
 * has none (404 and the other 4xx: a dead letter, the status in its message); or
 * 'unavailable' (5xx, the statuses of WAITING_4XX, anything else): the batch waits. Pure.
 */
export function classifySchemaAnswer(
  id: number,
  res: HttpResult,
): { schema: string } | Error | 'unavailable' {
  if (res.status === 404) return new Error(`schema id ${id} is not in the registry (HTTP 404)`);
  if (res.status >= 400 && res.status < 500 && !WAITING_4XX.has(res.status))
    return new Error(
      `the registry refused schema id ${id}: HTTP ${res.status} ${res.text.slice(0, 200)}`,
    );
  if (res.status !== 200) return 'unavailable';
  let body: { schema?: unknown; schemaType?: unknown };
  try {
    body = JSON.parse(res.text) as typeof body;
  } catch {
    return new Error(`schema id ${id}: the registry's answer is not JSON`);
  }
  if (body.schemaType !== undefined && body.schemaType !== 'AVRO')
    return new Error(`schema id ${id} is a ${String(body.schemaType)} schema, not Avro`);
  if (typeof body.schema !== 'string') return new Error(`schema id ${id}: no schema in the answer`);
  return { schema: body.schema };
}

export class RegistryCodec {
  private readonly ids = new Map<string, number>();
  private readonly writers = new Lru<number, Type | Error>(WRITER_CACHE_SIZE);

  constructor(
    readonly registry: SchemaRegistry,
    private readonly topics: SubjectTopics,
    private readonly url: string,
    private readonly auth?: BasicAuth,
    private readonly agent?: HttpsAgent,
    private readonly timeoutMs: number = REGISTRY_TIMEOUT_MS,
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
    const agent =
      tls?.caFile != null && url.startsWith('https://')
        ? new HttpsAgent({ keepAlive: true, ca: readFileSync(tls.caFile, 'utf8') })
        : undefined;
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
    return new RegistryCodec(registry, topics, url, auth, agent, timeoutMs);
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
        await registerUnion(
          this.url,
          eventSubject,
          rawSchemas.contextChangeEvent,
          this.auth,
          this.agent,
        ),
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
        await putBackwardCompatibility(this.url, subject, this.auth, this.agent);
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
        throw (
          schemaRefusal(this.url, subject, status, (e as Error).message) ??
          new RegistryUnavailableError(`registering ${subject}: ${(e as Error).message}`)
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

  /** GET /schemas/ids/{id}, classified; throws RegistryUnavailableError when it must wait. */
  private async fetchSchema(id: number): Promise<{ schema: string } | Error> {
    const what = `schema registry unreachable while fetching schema ${id}`;
    let res: HttpResult;
    try {
      res = await call(
        `${this.url}/schemas/ids/${id}`,
        'GET',
        registryHeaders(this.auth),
        '',
        this.agent,
        this.timeoutMs,
      );
    } catch (e) {
      this.unavailable = `${what}: ${(e as Error).message}`;
      throw new RegistryUnavailableError(this.unavailable);
    }
    const answer = classifySchemaAnswer(id, res);
    if (answer === 'unavailable') {
      this.unavailable = `${what}: HTTP ${res.status} ${res.text.slice(0, 200)}`;
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
