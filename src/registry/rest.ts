/**
 * The schema registry's REST calls this project makes itself (the others go through
 * @kafkajs/confluent-schema-registry): set a subject's compatibility, register the event
 * schema, fetch a writer's schema by id, and what each answer means. No encoding here: the
 * codec (src/registry/codec.ts) uses these.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { errorClass } from '../errors';
import { schemaRefusal } from './schemaRefusal';

/** One registry call failed (timeout, 5xx, connection): retriable. */
export class RegistryUnavailableError extends errorClass('REGISTRY_UNAVAILABLE') {}

/** 401/403 from the registry: retrying does not help, the credentials are wrong. */
export class RegistryAuthError extends errorClass('REGISTRY_AUTH_FAILED') {}

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
 * hold its batch, and with it the partition and a clean shutdown (test/unit/registry-timeout
 * .test.ts). Both clients, these REST calls and @kafkajs/confluent-schema-registry's
 * (mappersmith, no timeout by default), give up after this long; the failure then takes the
 * "registry unavailable" path (the batch is retried, /readyz says why).
 */
export const REGISTRY_TIMEOUT_MS = 15_000;

/**
 * The one https.Agent of a registry, trusting `tls.caFile`, for these calls and the library's
 * alike; none for http or without a CA (Node's defaults).
 */
export function registryAgent(url: string, tls?: RegistryTls): HttpsAgent | undefined {
  return tls?.caFile != null && url.startsWith('https://')
    ? new HttpsAgent({ keepAlive: true, ca: readFileSync(tls.caFile, 'utf8') })
    : undefined;
}

/**
 * One REST call over node:http(s), so that the same https.Agent (with the configured CA) serves
 * it and the library's calls. (Node's fetch, undici, takes no https.Agent; a global undici
 * dispatcher would change every other fetch in the process.)
 */
function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
  agent: HttpsAgent | undefined,
  timeoutMs: number,
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

/** A 401/403 from the registry, naming the settings that hold the credentials. */
export function authFailure(status: number, what: string, auth?: BasicAuth): RegistryAuthError {
  return new RegistryAuthError(
    `${what}: HTTP ${status} from the schema registry (${auth ? `basic auth as ${JSON.stringify(auth.username)} rejected` : 'no credentials configured'}) ` +
      '- check CG_REGISTRY_USERNAME and CG_REGISTRY_PASSWORD',
  );
}

function registryHeaders(auth?: BasicAuth): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/vnd.schemaregistry.v1+json',
  };
  if (auth)
    headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return headers;
}

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

/** A writer's schema by id: its text, an Error value (the id has none), or why it must wait. */
export type SchemaAnswer = { schema: string } | Error | { unavailable: string };

/** The REST calls against one registry, with its credentials, agent and timeout. */
export class RegistryRest {
  constructor(
    readonly url: string,
    private readonly auth: BasicAuth | undefined,
    private readonly agent: HttpsAgent | undefined,
    private readonly timeoutMs: number = REGISTRY_TIMEOUT_MS,
  ) {}

  private request(path: string, method: string, body = ''): Promise<HttpResult> {
    return call(
      `${this.url}${path}`,
      method,
      registryHeaders(this.auth),
      body,
      this.agent,
      this.timeoutMs,
    );
  }

  /**
   * Sets the subject's compatibility level to BACKWARD before any registration. The client
   * library sets it only after the first registration of a new subject, so an attempt cut off
   * in between would leave the subject at the registry's default, and every retry would then
   * fail with "Compatibility does not match the configuration (BACKWARD != NONE)".
   */
  async putBackwardCompatibility(subject: string): Promise<void> {
    const res = await this.request(
      `/config/${encodeURIComponent(subject)}`,
      'PUT',
      JSON.stringify({ compatibility: 'BACKWARD' }),
    );
    if (res.status === 401 || res.status === 403)
      throw authFailure(res.status, 'PUT config', this.auth);
    if (res.status < 200 || res.status >= 300)
      throw new Error(`PUT config: HTTP ${res.status} ${res.text}`);
  }

  /**
   * Registers a top-level union schema (the event schema: one record per event type, the
   * Confluent "several event types in one topic" pattern), BACKWARD compatible, and returns its
   * id: @kafkajs/confluent-schema-registry's `register` refuses schemas without a name.
   */
  async registerUnion(subject: string, schema: string): Promise<number> {
    await this.putBackwardCompatibility(subject);
    const res = await this.request(
      `/subjects/${encodeURIComponent(subject)}/versions`,
      'POST',
      JSON.stringify({ schema, schemaType: 'AVRO' }),
    );
    if (res.status === 401 || res.status === 403)
      throw authFailure(res.status, 'POST versions', this.auth);
    let body: { id?: number; message?: string } = {};
    try {
      body = JSON.parse(res.text) as typeof body;
    } catch {
      // not JSON: reported below with the status
    }
    const refused = schemaRefusal(
      this.url,
      subject,
      res.status,
      body.message ?? res.text.slice(0, 300),
    );
    if (refused !== null) throw refused;
    if (res.status < 200 || res.status >= 300 || typeof body.id !== 'number')
      throw new Error(`POST versions: HTTP ${res.status} ${body.message ?? ''}`);
    return body.id;
  }

  /** GET /schemas/ids/{id}, classified (classifySchemaAnswer); no answer at all waits too. */
  async schemaById(id: number): Promise<SchemaAnswer> {
    let res: HttpResult;
    try {
      res = await this.request(`/schemas/ids/${id}`, 'GET');
    } catch (e) {
      return { unavailable: (e as Error).message };
    }
    const answer = classifySchemaAnswer(id, res);
    return answer === 'unavailable'
      ? { unavailable: `HTTP ${res.status} ${res.text.slice(0, 200)}` }
      : answer;
  }
}
