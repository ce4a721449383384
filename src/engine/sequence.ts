/**
 * Steps 0, 1 and 2 of contract §4: recognise out-of-band redeliveries, classify an in-band
 * event's seq, and raise the gap head on a gap.
 */
import type { ContextEvent, MalformedRequest, Unit } from './events';
import {
  NO_SETS,
  REMEMBERED_EVENT_IDS,
  REMEMBERED_OUT_OF_BAND_IDS,
  type SessionState,
  headIn,
  turnSpan,
} from './state';
import { unreachable } from './unreachable';

/** Step 0: is this out-of-band eventId among the last 8 accepted (only those are compared)? */
export function isOutOfBandRedelivery(s: SessionState, idHash: number): boolean {
  return s.outOfBandIds.includes(idHash);
}

/** Step 0: an accepted out-of-band eventId joins the last 8, first in, first out. */
export function rememberOutOfBandId(s: SessionState, idHash: number): void {
  const ids = [...s.outOfBandIds, idHash];
  s.outOfBandIds = ids.length > REMEMBERED_OUT_OF_BAND_IDS ? ids.slice(1) : ids;
}

export type SeqClass = 'next' | 'gap' | 'duplicate' | 'conflict';

/** Step 1. `idHash` is null when the eventId is not known (a malformed request). */
export function classifySeq(s: SessionState, seq: number, idHash: number | null): SeqClass {
  if (s.lastSeq >= 0 && seq <= s.lastSeq) {
    const r = s.recent;
    for (let i = 0; i < r.length; i += 2) {
      if (r[i] === seq) return idHash !== null && r[i + 1] === idHash ? 'duplicate' : 'conflict';
    }
    return 'conflict';
  }
  return seq === s.lastSeq + 1 ? 'next' : 'gap';
}

const RING_SLOTS = 2 * REMEMBERED_EVENT_IDS;

/**
 * Remembers an accepted event's id: the 32 highest seqs are kept (contract §4). Accepted seqs
 * only grow, so appending keeps the pairs ascending; once full, the oldest pair is overwritten.
 */
export function rememberEventId(s: SessionState, seq: number, idHash: number): void {
  const r = s.recent;
  if (r.length < RING_SLOTS) {
    r.push(seq, idHash);
    // Full for good: an exact-size copy, so the array holds no spare capacity from growing.
    if (r.length === RING_SLOTS) s.recent = r.slice();
    return;
  }
  const at = s.recentNext;
  r[at] = seq;
  r[at + 1] = idHash;
  s.recentNext = at + 2 === RING_SLOTS ? 0 : at + 2;
}

/** Forgets every remembered id but this one's (a re-basing acknowledgement, contract §4). */
export function rememberOnly(s: SessionState, seq: number, idHash: number): void {
  s.recent = [seq, idHash];
  s.recentNext = 0;
}

/** The remembered seqs and eventId hashes, oldest (lowest seq) first. */
export function rememberedIds(s: SessionState): { seqs: number[]; ids: number[] } {
  const seqs: number[] = [];
  const ids: number[] = [];
  const r = s.recent;
  const n = r.length;
  for (let k = 0; k < n; k += 2) {
    const i = (s.recentNext + k) % n;
    seqs.push(r[i]!);
    ids.push(r[i + 1]!);
  }
  return { seqs, ids };
}

/**
 * The same state with its remembered pairs in ascending order from slot 0: the ring's
 * rotation is an accident of history, so equal states compare equal once both are canonical.
 */
export function withCanonicalRing(s: SessionState): SessionState {
  if (s.recentNext === 0) return s;
  const { seqs, ids } = rememberedIds(s);
  return { ...s, recent: rememberedFrom(seqs, ids), recentNext: 0 };
}

/** Rebuilds the remembered pairs from ascending lists (deserializing). */
export function rememberedFrom(seqs: readonly number[], ids: readonly number[]): number[] {
  const r: number[] = [];
  for (let i = 0; i < seqs.length; i++) r.push(seqs[i]!, ids[i]!);
  return r.slice();
}

/** The positions an event names in U (step 2): a turn's end, a range's end, a request's reach. */
export function namedPosition(e: ContextEvent | MalformedRequest, unit: Unit): number {
  switch (e.type) {
    case 'TurnAppended':
      return turnSpan(e, unit).end;
    case 'Truncated':
    case 'SpillCompleted':
    case 'LossAcknowledged':
      return e.unit === unit ? e.range.end : 0;
    case 'CompactionRequested':
    case 'CompactionCommitted':
      return e.unit === unit ? Math.max(e.summaryInput.end, e.tailStart) : 0;
    case 'SessionOpened':
    case 'SpillFailed':
    case 'SessionClosed':
    case 'MalformedRequest':
      return 0;
    default:
      return unreachable(e);
  }
}

/**
 * Step 2: on a gap, with a policy, Hg := max(Hg, H, position). Every gap also marks the
 * state as changed for stored verdicts (contract §5, "Repeated requestId") and expires the
 * one-compaction acceptance A1, with or without a policy: with the sequence broken, later
 * losses may go unseen, so a pass given for one known loss must not outlive it (held against
 * the reference model by engine.reference.property.test.ts, "gaps and conflicts").
 */
export function raiseGapHead(s: SessionState, position: number): void {
  s.epoch++;
  s.ackOnce = NO_SETS;
  const unit = s.unit;
  if (unit === null) return;
  const h = Math.max(headIn(s, unit), position);
  s.gapHead = s.gapHead === null ? h : Math.max(s.gapHead, h);
}
