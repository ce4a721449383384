/**
 * What a dropped state hands on (contract §4, grace and idle periods): the new unknown state
 * keeps the dropped one's lastEventAt and its out-of-band eventIds (a signed event cannot be
 * replayed against a freshly dropped session, §4b), and its evidence head F, so that what the
 * guard knew about positions below F still counts against the unknown session's requests (§5,
 * UNKNOWN_SESSION).
 */
import type { Unit } from './events';
import { type EvidenceHead, type SessionState, emptyState, headIn, knownHead } from './state';

/** F of a dropped state: its head in each unit (in U its known head H'), or its own F when unknown. */
export function evidenceOf(s: SessionState): EvidenceHead | null {
  const unit = s.unit;
  if (unit === null) return s.evidenceHead;
  const at = (u: Unit) => (u === unit ? knownHead(s, u) : headIn(s, u));
  return { TURNS: at('TURNS'), TOKENS: at('TOKENS'), MESSAGES: at('MESSAGES') };
}

/** The unknown state that replaces a dropped one. */
export function afterDrop(dropped: SessionState): SessionState {
  return {
    ...emptyState(),
    lastEventAt: dropped.lastEventAt,
    outOfBandIds: dropped.outOfBandIds,
    evidenceHead: evidenceOf(dropped),
  };
}

/**
 * An unknown state that has F keeps raising it, since it cannot place what it is told: in
 * `unit` to `end` (a TurnAppended raises every unit, a Truncated its own).
 */
export function raiseEvidence(s: SessionState, unit: Unit, end: number): void {
  const f = s.evidenceHead;
  if (f === null || f[unit] >= end) return;
  s.evidenceHead = { ...f, [unit]: end };
}

/** F in `unit`, 0 when none. */
export function evidenceIn(s: SessionState, unit: Unit): number {
  return s.evidenceHead === null ? 0 : s.evidenceHead[unit];
}
