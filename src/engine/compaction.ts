/**
 * Step 3 of contract §4 for CompactionRequested (decide, with the verdict store of §5
 * "Repeated requestId") and CompactionCommitted (audit the commit, then follow it).
 */
import type { CompactionCommitted, CompactionRequested, MalformedRequest } from './events';
import type { Collector } from './collector';
import { type DecisionStamps, decide, evaluate, refuseMalformed } from './decide';
import type { RequestInput } from './evaluation';
import { EMPTY, clip, range, subtract, union } from './intervals';
import { raiseGapHead } from './sequence';
import {
  NO_SETS,
  STORED_VERDICTS,
  type SessionState,
  type StoredVerdict,
  knownHead,
} from './state';
import { hash53 } from './hash';

function sameRequest(v: StoredVerdict, e: CompactionRequested | CompactionCommitted): boolean {
  return (
    v.unit === e.unit &&
    v.sIn === e.summaryInput.start &&
    v.eIn === e.summaryInput.end &&
    v.tailStart === e.tailStart
  );
}

function findStored(s: SessionState, key: number): number {
  for (let i = s.verdicts.length - 1; i >= 0; i--) if (s.verdicts[i]!.requestKey === key) return i;
  return -1;
}

/** Keeps the 16 most recently requested requestIds, the newest last. */
function store(s: SessionState, index: number, v: StoredVerdict): void {
  if (index >= 0) s.verdicts.splice(index, 1);
  s.verdicts.push(v);
  if (s.verdicts.length > STORED_VERDICTS) s.verdicts.shift();
}

function requestOf(e: CompactionRequested): RequestInput {
  return {
    requestId: e.requestId,
    eventId: e.eventId,
    unit: e.unit,
    summaryInput: e.summaryInput,
    tailStart: e.tailStart,
    seq: e.seq,
    occurredAt: e.occurredAt,
  };
}

export function applyCompactionRequested(
  s: SessionState,
  e: CompactionRequested,
  stamps: DecisionStamps,
  out: Collector,
): void {
  const key = hash53(e.requestId);
  const index = findStored(s, key);
  const stored = index >= 0 ? s.verdicts[index]! : null;
  if (stored && sameRequest(stored, e) && stored.epoch === s.epoch) {
    // Nothing changed since: the stored verdict again, stamps and all, and no new spill request;
    // only requestEventId names the request just received, since the orchestrator takes the
    // verdict of the eventId it sent (evolve-requests.test.ts, namedAndStripped).
    const again = { ...requestOf(e), seq: stored.inputSeq, occurredAt: stored.requestedAt };
    out.verdict = decide(s, again, { ...stamps, decidedAt: stored.decidedAt }).verdict;
    out.note('stored-verdict');
    store(s, index, stored);
    return;
  }
  if (stored && !sameRequest(stored, e)) {
    out.audit(
      'REQUEST_ID_REUSED',
      `requestId ${e.requestId} was first used for ${stored.unit} summaryInput [${stored.sIn},${stored.eIn}) tailStart ${stored.tailStart}, now for ${e.unit} summaryInput [${e.summaryInput.start},${e.summaryInput.end}) tailStart ${e.tailStart}`,
      e.unit,
      range(e.summaryInput.start, e.summaryInput.end),
    );
  }
  const decided = decide(s, requestOf(e), stamps);
  out.verdict = decided.verdict;
  store(s, index, {
    requestKey: key,
    unit: e.unit,
    sIn: e.summaryInput.start,
    eIn: e.summaryInput.end,
    tailStart: e.tailStart,
    decision: decided.verdict.decision,
    inputSeq: e.seq,
    requestedAt: e.occurredAt,
    decidedAt: stamps.decidedAt,
    epoch: s.epoch,
  });
  if (decided.spillRequest) {
    out.spillRequest = decided.spillRequest;
    const r = decided.spillRequest;
    s.pendingSpill = { id: r.spillRequestId, unit: r.unit, start: r.range.start, end: r.range.end };
  }
}

/** contract §3: answered (REFUSE, INVALID_REQUEST, HALT), not stored; its eventId is not remembered. */
export function answerMalformed(r: MalformedRequest, stamps: DecisionStamps, out: Collector): void {
  out.verdict = refuseMalformed(r, stamps);
}

function auditCommit(s: SessionState, e: CompactionCommitted, out: Collector): void {
  const index = findStored(s, hash53(e.requestId));
  const stored = index >= 0 ? s.verdicts[index]! : null;
  if (!stored || stored.decision !== 'APPROVE' || !sameRequest(stored, e)) {
    const why = !stored
      ? 'no verdict is stored for it'
      : stored.decision !== 'APPROVE'
        ? 'it was refused'
        : 'the committed ranges differ from the approved request';
    out.audit(
      'COMMITTED_WITHOUT_APPROVAL',
      `compaction ${e.requestId} was committed but ${why}`,
      e.unit,
      range(e.summaryInput.start, e.summaryInput.end),
    );
    return;
  }
  const again: RequestInput = { ...e, seq: stored.inputSeq, occurredAt: stored.requestedAt };
  const now = evaluate(s, again);
  if (now.fired.length > 0) {
    out.audit(
      'APPROVAL_STALE_AT_COMMIT',
      `compaction ${e.requestId} was approved but would be refused at commit (${now.fired.map((f) => f.code).join(', ')})`,
      // The holes were found where the rules look: U for a known session (§2).
      now.holeUnit,
      now.fired.reduce((acc, f) => union(acc, f.holes), EMPTY),
    );
  }
}

export function applyCompactionCommitted(
  s: SessionState,
  e: CompactionCommitted,
  out: Collector,
): void {
  auditCommit(s, e, out);
  // The one-compaction acceptance is used up, with or without a policy.
  s.ackOnce = NO_SETS;
  if (!s.policy) return;
  const unit = s.policy.floor.unit;
  if (e.unit !== unit) {
    out.audit(
      'UNPLACEABLE_RANGE',
      `a compaction commit in ${e.unit} cannot be placed: the session's floor unit is ${unit}`,
      e.unit,
      range(e.summaryInput.start, e.summaryInput.end),
    );
    raiseGapHead(s, 0);
    out.note('gap');
    return;
  }
  // The commit happened: the state follows it, positions clipped to H'.
  const hp = knownHead(s, unit);
  const t = Math.min(e.tailStart, hp);
  const input = subtract(
    clip(range(e.summaryInput.start, e.summaryInput.end), 0, hp),
    subtract(s.truncated, s.summary),
  );
  s.truncated = union(s.truncated, subtract(range(0, Math.max(t, s.verbatimStart)), input));
  s.summary = input;
  s.verbatimStart = Math.max(s.verbatimStart, t);
}
