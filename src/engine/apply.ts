/**
 * Step 3 of contract §4 for every event but the two compaction events (see `compaction.ts`).
 * Each handler changes `s`, a copy the caller owns, by assigning new immutable values.
 */
import type {
  LossAcknowledged,
  SessionOpened,
  SpillCompleted,
  SpillFailed,
  Truncated,
  TurnAppended,
  Unit,
} from './events';
import type { Collector } from './collector';
import {
  EMPTY,
  clip,
  format,
  intersect,
  isEmpty,
  isSubset,
  range,
  subtract,
  union,
} from './intervals';
import { raiseGapHead, rememberOnly } from './sequence';
import {
  NO_SETS,
  type SessionState,
  inUnit,
  knownHead,
  lastTurnEnd,
  turnSpan,
  withUnit,
} from './state';
import { hash53 } from './hash';
import { raiseEvidence } from './drop';
import { extentIn } from './extent';
import { UNIT_SYMBOLS } from './events';

export function applySessionOpened(s: SessionState, e: SessionOpened, out: Collector): void {
  if (s.policy) {
    out.note('ignored');
    return;
  }
  const p = e.policy;
  s.policy = p;
  s.unit = p.floor.unit;
  // P, A1, X, K and F of an unknown session serve only UNKNOWN_SESSION decisions (contract §4).
  s.spilled = NO_SETS;
  s.ackOnce = NO_SETS;
  s.unspillable = NO_SETS;
  s.coarsened = NO_SETS;
  s.evidenceHead = null;
  if (p.triggerTokens >= p.ceilingTokens) {
    out.audit(
      'TRIGGER_NOT_BELOW_CEILING',
      `compaction trigger ${p.triggerTokens} is not below the truncation ceiling ${p.ceilingTokens}: truncation will always precede compaction (the seed's root cause)`,
      null,
      EMPTY,
    );
  }
  if (p.floor.unit !== p.truncatorUnit) {
    out.audit(
      'UNIT_MISMATCH',
      `recovery floor in ${p.floor.unit} cannot be honored by a truncator in ${p.truncatorUnit} (seed condition 4)`,
      null,
      EMPTY,
    );
  }
}

/** Does the turn start where the last one ended (or at 0, the first)? */
export function continuesLastTurn(s: SessionState, e: TurnAppended): boolean {
  return s.lastTurn >= 0
    ? e.turn === s.lastTurn + 1 &&
        e.tokens.start === s.lastTokensEnd &&
        e.messages.start === s.lastMessagesEnd
    : e.turn === 0 && e.tokens.start === 0 && e.messages.start === 0;
}

/**
 * Heads and the last turn follow an appended turn. Numbers, not the event's span objects: a
 * state keeps nothing of the events it saw (they would outlive the young generation).
 */
export function advanceTurn(s: SessionState, e: TurnAppended): void {
  if (e.turn + 1 > s.headTurns) s.headTurns = e.turn + 1;
  if (e.tokens.end > s.headTokens) s.headTokens = e.tokens.end;
  if (e.messages.end > s.headMessages) s.headMessages = e.messages.end;
  s.lastTurn = e.turn;
  s.lastTokensStart = e.tokens.start;
  s.lastTokensEnd = e.tokens.end;
  s.lastMessagesStart = e.messages.start;
  s.lastMessagesEnd = e.messages.end;
}

export function applyTurnAppended(s: SessionState, e: TurnAppended, out: Collector): void {
  const unit = s.unit;
  if (unit === null) {
    // Unplaceable without a policy; an unknown state with F still learns how far it reached.
    for (const u of UNIT_SYMBOLS) raiseEvidence(s, u, turnSpan(e, u).end);
    out.note('ignored');
    return;
  }
  if (!continuesLastTurn(s, e)) {
    const span = turnSpan(e, unit);
    // Fail closed: the skipped positions may have held a constraint.
    raiseGapHead(s, span.end);
    out.note('gap');
    s.pins = union(s.pins, range(lastTurnEnd(s, unit), span.start));
  }
  if (e.pins.length > 0) pinTurn(s, e, unit);
  advanceTurn(s, e);
}

/** A pinned turn's span joins the pins (contract §4, TurnAppended). */
export function pinTurn(s: SessionState, e: TurnAppended, unit: Unit): void {
  const span = turnSpan(e, unit);
  s.pins = union(s.pins, range(span.start, span.end));
}

function unplaceable(
  s: SessionState,
  unit: Unit,
  start: number,
  end: number,
  what: string,
  out: Collector,
): void {
  out.audit(
    'UNPLACEABLE_RANGE',
    `${what} in ${unit} cannot be placed: the session's floor unit is ${s.policy!.floor.unit}`,
    unit,
    range(start, end),
  );
}

export function applyTruncated(s: SessionState, e: Truncated, out: Collector): void {
  // The one-compaction acceptance expires with any truncation, with or without a policy.
  s.ackOnce = NO_SETS;
  if (!s.policy) {
    // A truncation of the tail after a drop must not go unseen (contract §4, F).
    raiseEvidence(s, e.unit, e.range.end);
    out.note('ignored');
    return;
  }
  const unit = s.policy.floor.unit;
  if (e.unit !== unit) {
    unplaceable(s, e.unit, e.range.start, e.range.end, 'a truncation', out);
    raiseGapHead(s, 0);
    out.note('gap');
    return;
  }
  if (e.range.end > knownHead(s, unit)) {
    // The range names turns we have not seen.
    raiseGapHead(s, e.range.end);
    out.note('gap');
  }
  const r = range(e.range.start, e.range.end);
  const below = clip(r, 0, s.verbatimStart);
  if (e.reason === 'SUMMARY_EVICTED') {
    s.summary = subtract(s.summary, r);
    s.truncated = union(s.truncated, below);
  } else {
    s.truncated = union(s.truncated, r);
    s.summary = subtract(s.summary, below);
  }
  const recoverable = union(s.summary, union(inUnit(s.spilled, unit), s.ackPermanent));
  const lost = subtract(intersect(r, s.truncated), recoverable);
  const pinned = intersect(lost, s.pins);
  if (!isEmpty(pinned)) {
    out.audit(
      'PINNED_EVICTED',
      `truncation evicted pinned content at ${unit} ${format(pinned)} that no summary, spill or acknowledgement covers`,
      unit,
      pinned,
    );
  } else if (s.policy.coverage === 'STRICT' && !isEmpty(lost)) {
    out.audit(
      'CONTENT_EVICTED',
      `truncation evicted content at ${unit} ${format(lost)} that no summary, spill or acknowledgement covers`,
      unit,
      lost,
    );
  }
}

export function applySpillCompleted(s: SessionState, e: SpillCompleted, out: Collector): void {
  const reported = range(e.range.start, e.range.end);
  if (s.policy) {
    const unit = s.policy.floor.unit;
    if (e.unit !== unit) {
      unplaceable(s, e.unit, e.range.start, e.range.end, 'a spill', out);
      return;
    }
    s.spilled = withUnit(
      s.spilled,
      unit,
      union(inUnit(s.spilled, unit), clip(reported, 0, knownHead(s, unit))),
    );
  } else {
    // An unknown session: only positions it was told of (its extent E, extent.ts), so a signed
    // answer to a forged request cannot heal what the session has not reached yet
    // (evolve-rev12.test.ts, "is clipped to its extent E").
    const placed = clip(reported, 0, extentIn(s, e.unit));
    s.spilled = withUnit(s.spilled, e.unit, union(inUnit(s.spilled, e.unit), placed));
  }
  if (!isEmpty(reported)) s.spillFailed = false;
  const pending = s.pendingSpill;
  if (pending && pending.id === e.spillRequestId) {
    const asked = range(pending.start, pending.end);
    const missing = pending.unit === e.unit ? subtract(asked, reported) : asked;
    if (!isEmpty(missing)) {
      s.unspillable = withUnit(
        s.unspillable,
        pending.unit,
        union(inUnit(s.unspillable, pending.unit), missing),
      );
      out.audit(
        'SPILL_INCOMPLETE',
        `spill ${e.spillRequestId} stored ${e.unit} ${format(reported)} but ${pending.unit} ${format(missing)} was asked for and cannot be spilled`,
        pending.unit,
        missing,
      );
    }
    s.pendingSpill = null;
  }
}

export function applySpillFailed(s: SessionState, e: SpillFailed, out: Collector): void {
  if (!s.pendingSpill || s.pendingSpill.id !== e.spillRequestId) {
    out.note('ignored');
    return;
  }
  s.spillFailed = true;
  s.pendingSpill = null;
}

export function applyLossAcknowledged(s: SessionState, e: LossAcknowledged, out: Collector): void {
  let unit: Unit = e.unit;
  let r = range(e.range.start, e.range.end);
  if (s.policy) {
    unit = s.policy.floor.unit;
    if (e.unit !== unit) {
      unplaceable(s, e.unit, e.range.start, e.range.end, 'a loss acknowledgement', out);
      return;
    }
    r = clip(r, 0, knownHead(s, unit));
    // (1) What is already lost is written off for good, except where a coarsening made it
    // unknown whether the position was really lost (K, contract §4a).
    const lost = subtract(s.truncated, union(s.summary, inUnit(s.spilled, unit)));
    const writtenOff = subtract(intersect(r, lost), inUnit(s.coarsened, unit));
    s.ackPermanent = union(s.ackPermanent, writtenOff);
    // (2) A range covering [0,Hg) writes the gap off. An in-band acknowledgement re-bases the
    // sequence on itself; an out-of-band one leaves it to the orchestrator, which carries on
    // with its own next seq (contract §4, LossAcknowledged (2)).
    if (s.gapHead !== null && isSubset(range(0, s.gapHead), r)) {
      s.gapHead = null;
      if (e.seq !== null) {
        s.lastSeq = e.seq;
        rememberOnly(s, e.seq, hash53(e.eventId));
      }
    }
  } else {
    // An unknown session: only positions it was told of (its extent E, extent.ts), as for a
    // spill (evolve-events.test.ts, "unknown sessions: only A1 applies, clipped to the extent E").
    r = clip(r, 0, extentIn(s, unit));
  }
  // (3) The whole range lets exactly one compaction through.
  s.ackOnce = withUnit(NO_SETS, unit, r);
  s.spillFailed = false;
  out.audit(
    'LOSS_ACKNOWLEDGED',
    `${e.by} acknowledged that ${unit} ${format(r)} may be lost: ${e.reason}`,
    unit,
    r,
  );
}
