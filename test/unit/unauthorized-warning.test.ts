/**
 * The processor says an unsigned or untrusted signed-type event in its log
 * (src/kafka/unauthorizedWarning.ts): one warn line naming the producer-side fix at the first
 * one, then at most one per interval with the count since, never one per record.
 */
import type { Output } from '../../src/engine/collector';
import type { AuditRecord } from '../../src/engine/outputs';
import { UnauthorizedEventWarning } from '../../src/kafka/unauthorizedWarning';

const audit = (code: AuditRecord['code'], sessionId = 's1'): Output => ({
  record: 'audit',
  value: {
    kind: 'VIOLATION',
    code,
    sessionId,
    message:
      'SpillCompleted e-1 not applied: no signature; a spill report needs a signature by a key with role SPILL of the trusted key ring',
    inputSeq: 7,
    requestId: null,
    ranges: [],
    occurredAt: 0,
  },
});

function warning(): {
  observer: UnauthorizedEventWarning;
  lines: { n: number; msg: string }[];
  clock: { t: number };
} {
  const lines: { n: number; msg: string }[] = [];
  const clock = { t: 1_000 };
  const log = {
    warn: (o: { notApplied: number }, msg: string) => lines.push({ n: o.notApplied, msg }),
  };
  return {
    observer: new UnauthorizedEventWarning(log as never, 60_000, () => clock.t),
    lines,
    clock,
  };
}

describe('UnauthorizedEventWarning', () => {
  it('the first UNAUTHORIZED_EVENT is one warn line naming the fix on the producer side (CG_SIGNING_KEY_FILE, signingKey, acknowledge --key) and the record', () => {
    const { observer, lines } = warning();
    observer.output(audit('UNAUTHORIZED_EVENT'));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).not.toContain('\n');
    expect(lines[0]!.msg).toMatch(
      /^1 signed-type event not applied \(UNAUTHORIZED_EVENT\), e\.g\. session s1: SpillCompleted e-1 not applied: no signature/,
    );
    expect(lines[0]!.msg).toMatch(
      /CG_TRUSTED_KEYS_FILE.*CG_SIGNING_KEY_FILE.*signingKey.*acknowledge --key/,
    );
  });

  it('1,000 records within a minute are one line; the next after the minute says how many came since', () => {
    const { observer, lines, clock } = warning();
    for (let i = 0; i < 1_000; i++) {
      observer.output(audit('UNAUTHORIZED_EVENT'));
      clock.t += 50;
    }
    expect(lines).toHaveLength(1);
    clock.t += 60_000;
    observer.output(audit('UNAUTHORIZED_EVENT', 's2'));
    expect(lines.map((l) => l.n)).toEqual([1, 1_000]);
    expect(lines[1]!.msg).toMatch(/^1000 signed-type events not applied .* session s2:/);
  });

  it('other outputs say nothing', () => {
    const { observer, lines } = warning();
    observer.output(audit('CONTENT_EVICTED'));
    observer.output({ record: 'verdict', value: {} as never });
    expect(lines).toEqual([]);
  });
});
