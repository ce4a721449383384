/**
 * A registry that answers a registration with a refusal (409: the subject holds a schema this
 * one is not compatible with; 422: the schema or the compatibility level is invalid) is neither
 * unreachable nor transient: asking again gets the same answer. It is REGISTRY_SCHEMA_REFUSED,
 * one line naming the registry, the subject, the status and what to do, instead of
 * REGISTRY_UNREACHABLE's "check that the registry is up" after five attempts.
 */
import { errorClass } from '../errors';

/** The registry refused one of our schemas: not retriable. */
export class RegistrySchemaRefusedError extends errorClass(
  'REGISTRY_SCHEMA_REFUSED',
  'RegistrySchemaRefusedError',
) {}

/** 4xx answers that say nothing about the schema (credentials, not found, timeout, rate limit). */
const NOT_ABOUT_THE_SCHEMA: ReadonlySet<number> = new Set([401, 403, 404, 407, 408, 429]);

/** What to do about a refusal, by status. */
function advice(status: number): string {
  if (status === 409)
    return 'the subject holds a schema this one cannot evolve from (BACKWARD): another deployment uses topics of these names, or an older incompatible version was registered; give this deployment topics of its own (CG_INPUT_TOPIC, CG_VERDICT_TOPIC, ...) or delete the subject';
  return 'the registry rejects the schema or its compatibility level; check that it is a Confluent-compatible registry that supports Avro';
}

/**
 * The status the registry itself answered, read from an error of the client library
 * (@kafkajs/confluent-schema-registry over mappersmith), or undefined when it gave no answer of
 * its own (decision 245). mappersmith reports a request that got no answer at all (its timeout,
 * a refused or reset connection) as status 400 with the socket's message for a body, which the
 * library words "<client> - Error, status 400: Timeout (15000ms)". A registry's own answer to a
 * registration has a JSON body with a message, which the library words "<client> - <message>".
 * So a body without a message is no refusal by the registry: seen in CI, where Apicurio held a
 * registration past the timeout and the start-up ended as if the schema had been refused.
 */
export function registryAnswerStatus(e: {
  status?: unknown;
  message?: unknown;
}): number | undefined {
  if (typeof e.status !== 'number') return undefined;
  const withoutMessage = / - Error, status \d+(: |$)/;
  return typeof e.message === 'string' && withoutMessage.test(e.message) ? undefined : e.status;
}

/**
 * The refusal an answer to registering `subject` at `url` means, or null when the status is
 * not one (2xx, 5xx, or a 4xx about something else). Pure.
 */
export function schemaRefusal(
  url: string,
  subject: string,
  status: number | undefined,
  detail: string,
): RegistrySchemaRefusedError | null {
  if (status === undefined || status < 400 || status >= 500 || NOT_ABOUT_THE_SCHEMA.has(status))
    return null;
  return new RegistrySchemaRefusedError(
    `the schema registry at ${url} (SCHEMA_REGISTRY_URL) refused the schema of subject ${subject}: HTTP ${status} ${detail.trim()} - ${advice(status)}`,
  );
}
