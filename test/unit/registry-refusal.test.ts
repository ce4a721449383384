/**
 * A registry that refuses one of our schemas (src/registry/schemaRefusal.ts) is its own code,
 * REGISTRY_SCHEMA_REFUSED (not retriable, `run` exits 8): one line naming the registry, the
 * subject, the status and what to do, not REGISTRY_UNREACHABLE's "is the registry up?".
 */
import { ERROR_CODES, isRetriable } from '../../src/errors';
import { RUN_FAILURES, reportFailure } from '../../src/cli/failures';
import { schemaRefusal } from '../../src/registry/schemaRefusal';

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
