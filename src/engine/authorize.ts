/**
 * The authority check of contract §4b: decided once per event on the session as it is before
 * the event (`authorityOf`, which also says whether the event advances the session, §4), and
 * reported where step 3 would apply a signable event: one that fails is reported (VIOLATION
 * UNAUTHORIZED_EVENT, naming the failed check) and not applied (the caller also undoes step 0
 * for an out-of-band one).
 */
import {
  type AuthorityFailure,
  type SignableEvent,
  type TrustedKeyRing,
  authorityFailure,
  isSignable,
} from './authority';
import type { Collector } from './collector';
import { range } from './intervals';
import type { SessionState } from './state';
import { unreachable } from './unreachable';

const WHO: Record<SignableEvent['type'], string> = {
  LossAcknowledged: 'a loss acknowledgement needs a signature by a key with role ACKNOWLEDGE',
  SpillCompleted: 'a spill report needs a signature by a key with role SPILL',
  SpillFailed: 'a spill failure needs a signature by a key with role SPILL',
};

/**
 * Why `e` is not authorized, or null: null too without a ring or for a type that needs no
 * signature. `s` is the session before the event (undefined: it has no state).
 */
export function authorityOf(
  s: SessionState | undefined,
  e: { type: string },
  ring: TrustedKeyRing | null,
): AuthorityFailure | null {
  if (ring === null || !isSignable(e)) return null;
  return authorityFailure(e, ring, s === undefined ? null : s.lastEventAt);
}

/** Reports a signable event that failed the check (step 3 does not apply it). */
export function reportUnauthorized(
  e: SignableEvent,
  failure: AuthorityFailure,
  out: Collector,
): void {
  const keyId = e.signature ? ` (keyId ${JSON.stringify(e.signature.keyId)})` : '';
  const message = `${e.type} ${e.eventId} not applied: ${failure}${keyId}; ${WHO[e.type]} of the trusted key ring`;
  switch (e.type) {
    case 'SpillFailed':
      out.audit('UNAUTHORIZED_EVENT', message, null, []);
      break;
    case 'SpillCompleted':
    case 'LossAcknowledged':
      out.audit('UNAUTHORIZED_EVENT', message, e.unit, range(e.range.start, e.range.end));
      break;
    default:
      unreachable(e);
  }
  out.note('unauthorized');
}
