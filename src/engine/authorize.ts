/**
 * The authority check of contract §4b where step 3 would apply a signable event: one that fails
 * is reported (VIOLATION UNAUTHORIZED_EVENT, naming the failed check) and not applied (the
 * caller also undoes step 0 for an out-of-band one).
 */
import { type SignableEvent, type TrustedKeyRing, authorityFailure } from './authority';
import type { Collector } from './collector';
import { range } from './intervals';
import type { SessionState } from './state';

const WHO: Record<SignableEvent['type'], string> = {
  LossAcknowledged: 'a loss acknowledgement needs a signature by a key with role ACKNOWLEDGE',
  SpillCompleted: 'a spill report needs a signature by a key with role SPILL',
  SpillFailed: 'a spill failure needs a signature by a key with role SPILL',
};

/** True when `e` is authorized; otherwise the violation is emitted and false returned. */
export function authorized(
  s: SessionState,
  e: SignableEvent,
  ring: TrustedKeyRing,
  out: Collector,
): boolean {
  const failure = authorityFailure(e, ring, s.lastEventAt);
  if (failure === null) return true;
  const keyId = e.signature ? ` (keyId ${JSON.stringify(e.signature.keyId)})` : '';
  const message = `${e.type} ${e.eventId} not applied: ${failure}${keyId}; ${WHO[e.type]} of the trusted key ring`;
  if (e.type === 'SpillFailed') out.audit('UNAUTHORIZED_EVENT', message, null, []);
  else out.audit('UNAUTHORIZED_EVENT', message, e.unit, range(e.range.start, e.range.end));
  out.note('unauthorized');
  return false;
}
