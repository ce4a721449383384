/**
 * One input event through one session (contract §4), on a state the caller owns: the
 * SessionClosed grace check, then out of band (step 0) or seq (step 1) and gap (step 2), and
 * apply (step 3), deciding requests on the way (§5). Deterministic and free of I/O (the clock
 * is passed in; the same inputs give the same outputs), but not pure: `evolveInPlace` changes
 * the state it is given. Its callers own that state: the processor's batch (a working copy of
 * each session, src/kafka/batch/planner.ts) and `audit`'s replay. `evolve` (evolve.ts) is the pure
 * form, on a copy.
 */
import type { ContextEvent, MalformedRequest, TurnAppended } from './events';
import { Collector, type Note, type Output } from './collector';
import {
  applyLossAcknowledged,
  applySessionOpened,
  applySpillCompleted,
  applySpillFailed,
  applyTruncated,
  applyTurnAppended,
  advanceTurn,
  continuesLastTurn,
} from './apply';
import { answerMalformed, applyCompactionCommitted, applyCompactionRequested } from './compaction';
import {
  classifySeq,
  isOutOfBandRedelivery,
  namedPosition,
  raiseGapHead,
  rememberEventId,
  rememberOutOfBandId,
} from './sequence';
import { type SessionState, emptyState } from './state';
import { hash53 } from './hash';
import type { AuthorityFailure, SignableEvent, TrustedKeyRing } from './authority';
import { afterDrop } from './drop';
import { authorityOf, reportUnauthorized } from './authorize';
import { coarsenState } from './coarsen';
import { raiseExtentBy } from './extent';
import { unreachable } from './unreachable';

export type EngineInput = ContextEvent | MalformedRequest;

export interface EngineOptions {
  /** SessionClosed grace period in event time (contract §4), default 1 h. */
  graceMs: number;
  /** Idle period in event time (contract §4), default 30 days. */
  idleMs: number;
  engineVersion: string;
  /**
   * The trusted key ring of contract §4b, or null: without one, signatures are not looked at and
   * SpillCompleted, SpillFailed and LossAcknowledged apply whether signed or not.
   */
  trustedKeys: TrustedKeyRing | null;
}

export interface StepResult {
  /**
   * The session's state after the event; undefined only when it had none and the event left
   * none (an out-of-band event that failed the authority check, contract §4b).
   */
  state: SessionState | undefined;
  outputs: readonly Output[];
  notes: readonly Note[];
}

const NO_OUTPUTS: readonly Output[] = Object.freeze([]) as readonly Output[];
const NO_NOTES: readonly Note[] = Object.freeze([]) as readonly Note[];

/**
 * The ~94 % case as one short step: the next seq of an open, known session within its idle
 * period, a turn that continues the last one and carries no pin. Exactly what steps 1–3 do for
 * it (nothing to audit, no note, no set changes so nothing to coarsen), without the general
 * path's collector; false, and nothing changed, for any other turn.
 */
function appendedInOrder(s: SessionState, e: TurnAppended, idleMs: number): boolean {
  if (
    s.unit === null ||
    s.closedAt !== null ||
    e.seq !== s.lastSeq + 1 ||
    e.pins.length !== 0 ||
    (s.lastEventAt !== null && e.occurredAt - s.lastEventAt > idleMs) ||
    !continuesLastTurn(s, e)
  ) {
    return false;
  }
  rememberEventId(s, e.seq, hash53(e.eventId));
  s.lastSeq = e.seq;
  s.epoch++;
  advanceTurn(s, e);
  if (s.lastEventAt === null || e.occurredAt > s.lastEventAt) s.lastEventAt = e.occurredAt;
  return true;
}

/**
 * How steps 1 and 2 treat each input type, beyond its seq:
 * - `survivesConflict`: still applied in conflict. A conflict fails closed, its place in the
 *   order being unknown, except for a request (still decided) and a SpillCompleted or
 *   LossAcknowledged, whose effect does not depend on order, so a session with a broken
 *   sequence keeps its ways out.
 * - `request`: every accepted event but a request marks the state as changed for stored
 *   verdicts (bumps its epoch, contract §5 "Repeated requestId").
 */
const IN_BAND: Record<EngineInput['type'], { survivesConflict: boolean; request: boolean }> = {
  SessionOpened: { survivesConflict: false, request: false },
  TurnAppended: { survivesConflict: false, request: false },
  Truncated: { survivesConflict: false, request: false },
  CompactionRequested: { survivesConflict: true, request: true },
  MalformedRequest: { survivesConflict: true, request: true },
  CompactionCommitted: { survivesConflict: false, request: false },
  SpillCompleted: { survivesConflict: true, request: false },
  SpillFailed: { survivesConflict: false, request: false },
  LossAcknowledged: { survivesConflict: true, request: false },
  SessionClosed: { survivesConflict: false, request: false },
};

function stampsFor(e: EngineInput, decidedAt: number, options: EngineOptions) {
  return { sessionId: e.sessionId, decidedAt, engineVersion: options.engineVersion };
}

function requestIdOf(e: EngineInput): string | null {
  return 'requestId' in e ? e.requestId : null;
}

/**
 * The grace and idle checks (contract §4): whether an event at `occurredAt` finds the session
 * past its SessionClosed's grace period or its idle period. Only an event that advances the
 * session acts on it (it drops the state first).
 */
function pastGraceOrIdle(s: SessionState, occurredAt: number, options: EngineOptions): boolean {
  if (s.closedAt !== null && occurredAt - s.closedAt > options.graceMs) return true;
  return s.lastEventAt !== null && occurredAt - s.lastEventAt > options.idleMs;
}

/**
 * Does the event advance the session (contract §4)? Decided once, on the state as it is
 * before the event: in band at exactly its next seq, or out of band and not a redelivery; a
 * signable event only when authorized; a SessionOpened with seq 0 also when the session is
 * past its grace or idle period (a session id used again). A dead-lettered record (an answered
 * malformed request) never does. Only such an event sets lastEventAt or drops a state, so a
 * record at a gap seq, in conflict or unsigned can neither drop a session nor make its signed
 * events expire.
 */
function advancesSession(
  s: SessionState | undefined,
  e: EngineInput,
  failure: AuthorityFailure | null,
  options: EngineOptions,
): boolean {
  if (e.type === 'MalformedRequest' || failure !== null) return false;
  if (e.seq === null) return s === undefined || !isOutOfBandRedelivery(s, hash53(e.eventId));
  if (s === undefined) return e.seq === 0;
  if (e.seq === s.lastSeq + 1) return true;
  return e.type === 'SessionOpened' && e.seq === 0 && pastGraceOrIdle(s, e.occurredAt, options);
}

/**
 * The same step on a state the caller owns: it is changed in place and returned (or replaced by
 * a fresh unknown one when the grace or idle period has passed). Same outputs as `evolve`.
 */
export function evolveInPlace(
  owned: SessionState | undefined,
  e: EngineInput,
  decidedAt: number,
  options: EngineOptions,
): StepResult {
  if (
    owned !== undefined &&
    e.type === 'TurnAppended' &&
    appendedInOrder(owned, e, options.idleMs)
  ) {
    return { state: owned, outputs: NO_OUTPUTS, notes: NO_NOTES };
  }
  const failure = authorityOf(owned, e, options.trustedKeys);
  const advances = advancesSession(owned, e, failure, options);
  const dropped = advances && owned !== undefined && pastGraceOrIdle(owned, e.occurredAt!, options);
  const s = owned === undefined ? emptyState() : dropped ? afterDrop(owned) : owned;

  const out = new Collector(e.sessionId, e.seq, e.occurredAt ?? decidedAt, requestIdOf(e));
  if (dropped) out.note('state-dropped');

  // Only the out-of-band types admit a null seq (every other type's seq is a number).
  const seq = e.seq;
  const outOfBandIds = s.outOfBandIds;
  const admission =
    seq === null ? admitOutOfBand(s, e as SignableEvent) : admitInBand(s, e, seq, out);
  if (admission === 'duplicate') return { state: s, outputs: [], notes: ['duplicate'] };
  if (admission === 'apply' && failure !== null) {
    // Checked where step 3 would apply it (§4b): reported, not applied.
    reportUnauthorized(e as SignableEvent, failure, out);
    if (seq === null) {
      // Step 0 undone, so unsigned junk cannot push a signed event out of the window; and it
      // leaves no state behind: junk for ids never seen must cost no memory
      // (evolve-rev12.test.ts, "for a session id never seen creates no state").
      s.outOfBandIds = outOfBandIds;
      if (owned === undefined)
        return { state: undefined, outputs: out.outputs(), notes: out.notes };
    }
  } else if (admission === 'apply') {
    if (advances && s.unit === null) raiseExtentBy(s, e);
    applyEvent(s, e, stampsFor(e, decidedAt, options), advances, out);
  }
  coarsenState(s, out);
  if (advances) noteEventTime(s, e.occurredAt!);
  return { state: s, outputs: out.outputs(), notes: out.notes };
}

/**
 * lastEventAt := max(lastEventAt, occurredAt) for an event that advanced the session (contract
 * §4), as the last thing it does.
 */
function noteEventTime(s: SessionState, occurredAt: number): void {
  if (s.lastEventAt === null || occurredAt > s.lastEventAt) s.lastEventAt = occurredAt;
}

type Admission = 'apply' | 'duplicate' | 'not-applied';

/**
 * Step 0: a redelivery (its eventId among the last 8 out-of-band ones) is ignored; otherwise
 * the event is accepted without touching the sequence (steps 1 and 2 are skipped: no last seq,
 * no remembered seq eventIds, never a gap) and counts as accepted for stored verdicts.
 */
function admitOutOfBand(s: SessionState, e: SignableEvent): Admission {
  const idHash = hash53(e.eventId);
  if (isOutOfBandRedelivery(s, idHash)) return 'duplicate';
  rememberOutOfBandId(s, idHash);
  s.epoch++;
  return 'apply';
}

/** Steps 1 and 2: redelivery, conflict (fail closed), gap; then whether step 3 applies. */
function admitInBand(s: SessionState, e: EngineInput, seq: number, out: Collector): Admission {
  const idHash = e.type === 'MalformedRequest' ? null : hash53(e.eventId);
  const seqClass = classifySeq(s, seq, idHash);
  if (seqClass === 'duplicate') return 'duplicate';
  if (seqClass === 'conflict') {
    out.note('conflict');
    // A SessionOpened in conflict, whatever policy it carries, contests the policy (§4).
    if (e.type === 'SessionOpened') s.contested = true;
    out.audit(
      'SEQ_CONFLICT',
      `seq ${seq} is at or below the last seq ${s.lastSeq} and is not a redelivery of the event remembered there: its place in the order is unknown`,
      null,
      [],
    );
  }
  if (seqClass === 'conflict' || seqClass === 'gap') {
    out.note('gap');
    raiseGapHead(s, s.policy ? namedPosition(e, s.policy.floor.unit) : 0);
  }
  if (seqClass !== 'conflict' && idHash !== null) rememberEventId(s, seq, idHash);
  s.lastSeq = Math.max(s.lastSeq, seq);

  if (seqClass === 'conflict' && !IN_BAND[e.type].survivesConflict) return 'not-applied';
  if (!IN_BAND[e.type].request) s.epoch++;
  return 'apply';
}

/** Step 3, for an event that passed the authority check (or needs none). */
function applyEvent(
  s: SessionState,
  e: EngineInput,
  stamps: ReturnType<typeof stampsFor>,
  advances: boolean,
  out: Collector,
): void {
  switch (e.type) {
    case 'SessionOpened':
      applySessionOpened(s, e, out);
      break;
    case 'TurnAppended':
      applyTurnAppended(s, e, out);
      break;
    case 'Truncated':
      applyTruncated(s, e, out);
      break;
    case 'CompactionRequested':
      applyCompactionRequested(s, e, stamps, out);
      break;
    case 'MalformedRequest':
      answerMalformed(e, stamps, out);
      break;
    case 'CompactionCommitted':
      applyCompactionCommitted(s, e, out);
      break;
    case 'SpillCompleted':
      applySpillCompleted(s, e, out);
      break;
    case 'SpillFailed':
      applySpillFailed(s, e, out);
      break;
    case 'LossAcknowledged':
      applyLossAcknowledged(s, e, out);
      break;
    case 'SessionClosed':
      // Only when it advances the session: a SessionClosed at a gap seq can neither hasten nor
      // put off the grace drop (as test/support/referenceModel.ts, which
      // engine.reference.property.test.ts holds the engine to).
      if (advances) s.closedAt = e.occurredAt;
      break;
    default:
      unreachable(e);
  }
}
