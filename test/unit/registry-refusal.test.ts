/**
 * A registry that refuses one of our schemas (src/registry/schemaRefusal.ts) is its own code,
 * REGISTRY_SCHEMA_REFUSED (not retriable, `run` exits 8): one line naming the registry, the
 * subject, the status and what to do, not REGISTRY_UNREACHABLE's "is the registry up?".
 */
import { ERROR_CODES, isRetriable } from '../../src/errors';
import { RUN_FAILURES, reportFailure } from '../../src/cli/failures';
import { registryAnswerStatus, schemaRefusal } from '../../src/registry/schemaRefusal';

const URL = 'http://registry:8081';

describe('schemaRefusal', () => {
  it('409 and 422 are refusals naming the registry, the subject and the status; 409 says what to do about topics of the same names', () => {
    const e = schemaRefusal(URL, 'ctx-value', 409, 'Schema being registered is incompatible')!;
    expect(e.code).toBe('REGISTRY_SCHEMA_REFUSED');
    expect(isRetriable(e)).toBe(false);
    expect(e.message).not.toContain('\n');
    expect(e.message).toMatch(
      /^the schema registry at http:\/\/registry:8081 \(SCHEMA_REGISTRY_URL\) refused the schema of subject ctx-value: HTTP 409 Schema being registered is incompatible - .*CG_INPUT_TOPIC/,
    );
    expect(schemaRefusal(URL, 'ctx-value', 422, 'Invalid schema')?.message).toContain('HTTP 422');
  });

  it('statuses about something else are not refusals: success, 5xx, credentials, not found, timeout, rate limit, no answer', () => {
    for (const status of [200, 500, 503, 401, 403, 404, 407, 408, 429, undefined])
      expect(schemaRefusal(URL, 'ctx-value', status, 'x')).toBeNull();
  });

  it('`run` ends with status 8 and the line, at once (nothing to retry)', () => {
    expect(ERROR_CODES.REGISTRY_SCHEMA_REFUSED.exitCode).toBe(8);
    let out = '';
    const status = reportFailure(
      'run',
      schemaRefusal(URL, 'ctx-value', 409, 'incompatible'),
      RUN_FAILURES,
      false,
      (s) => (out += s),
    );
    expect(status).toBe(8);
    expect(out).toMatch(
      /^compaction-guard run: the schema registry at .* \[REGISTRY_SCHEMA_REFUSED\]\n$/,
    );
  });
});

describe('registryAnswerStatus (decision 245)', () => {
  it("a status the client library made up for a request without an answer (timeout, refused connection) is no answer of the registry's", () => {
    for (const message of [
      'Confluent_Schema_Registry - Error, status 400: Timeout (15000ms)',
      'Confluent_Schema_Registry - Error, status 400: connect ECONNREFUSED 127.0.0.1:8081',
      'Confluent_Schema_Registry - Error, status 400',
    ])
      expect(registryAnswerStatus({ status: 400, message })).toBeUndefined();
  });

  it("a registry's own answer, a JSON body with a message, keeps its status, so 409 and 422 stay refusals", () => {
    const incompatible = {
      status: 409,
      message:
        'Confluent_Schema_Registry - Schema being registered is incompatible with an earlier schema',
    };
    expect(registryAnswerStatus(incompatible)).toBe(409);
    expect(
      registryAnswerStatus({ status: 422, message: 'Confluent_Schema_Registry - Invalid schema' }),
    ).toBe(422);
    expect(
      schemaRefusal(URL, 'ctx-value', registryAnswerStatus(incompatible), incompatible.message)
        ?.code,
    ).toBe('REGISTRY_SCHEMA_REFUSED');
  });

  it('an error without a numeric status has none', () => {
    expect(registryAnswerStatus(new Error('socket hang up'))).toBeUndefined();
    expect(registryAnswerStatus({ status: '409', message: 'x' })).toBeUndefined();
  });
});
