/**
 * `compaction-guard acknowledge` with a key the processor does not accept ends in one line
 * naming the check that failed and the fix (src/cli/acknowledge.ts unauthorizedLine), read from
 * the UNAUTHORIZED_EVENT record exactly as the engine writes it (src/engine/authorize.ts).
 */
import type { AuthorityFailure } from '../../src/engine/authority';
import { reportUnauthorized } from '../../src/engine/authorize';
import { Collector } from '../../src/engine/collector';
import type { LossAcknowledged } from '../../src/engine/events';
import { unauthorizedLine } from '../../src/cli/acknowledge';

const ack: LossAcknowledged = {
  type: 'LossAcknowledged',
  sessionId: 's',
  seq: null,
  eventId: 'e-1',
  occurredAt: 1_000,
  unit: 'TURNS',
  range: { start: 0, end: 8 },
  by: 'oncall',
  reason: 'written off',
  signature: { keyId: 'k-1', value: 'x', expiresAt: 2_000 },
} as LossAcknowledged;

/** The record's message as the processor writes it for `failure`. */
function recordMessage(failure: AuthorityFailure, signed = true): string {
  const out = new Collector('s', null, 1_000, null);
  reportUnauthorized(signed ? ack : { ...ack, signature: null }, failure, out);
  const [first] = out.outputs();
  return first!.record === 'audit' ? first!.value.message : '';
}

const key = { keyId: 'k-1', name: 'oncall' };

describe('acknowledge: the line after UNAUTHORIZED_EVENT', () => {
  it.each<[AuthorityFailure, RegExp]>([
    ['no signature', /^not applied \(no signature\): .*--key FILE/],
    [
      'unknown key',
      /^not applied \(unknown key\): key k-1 \(oncall\) is not in the processor's ring \(CG_TRUSTED_KEYS_FILE\)/,
    ],
    ['key without the role', /^not applied \(key without the role\): .*without role ACKNOWLEDGE/],
    [
      'bad signature',
      /^not applied \(bad signature\): the ring's public key for k-1 is not this key's/,
    ],
    ['expired', /^not applied \(expired\): .*clock/],
  ])('%s: names the check and its fix, in one line', (failure, expected) => {
    const line = unauthorizedLine(recordMessage(failure, failure !== 'no signature'), key);
    expect(line).toMatch(expected);
    expect(line).not.toContain('\n');
  });

  it('a message it cannot read still ends in one line naming the ring and the role', () => {
    expect(unauthorizedLine('something else', key)).toMatch(
      /^not applied \(UNAUTHORIZED_EVENT\): is key k-1 \(oncall\) in the processor's ring \(CG_TRUSTED_KEYS_FILE\) with role ACKNOWLEDGE/,
    );
  });
});
