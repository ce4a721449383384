/**
 * What a caller gives a GuardedSession and gets back: turns, compaction requests and reports,
 * the transcript a spill stores, and the snapshot a session is resumed from.
 */
import type { ContextEvent, Pin, Policy, Role, Span, Unit } from '../../engine/events';
import type { Verdict } from '../../engine/outputs';
import type { SpillStore } from '../spill';
import type { TranscriptContent } from '../transcript';

/** A turn's place in every unit, as sent in its TurnAppended. */
export interface TurnPosition {
  turn: number;
  tokens: Span;
  messages: Span;
}

export interface TurnInput {
  role: Role;
  /** The turn's size in tokens (> 0), counted as the orchestrator counts its context. */
  tokens: number;
  /** Messages the turn holds (> 0); default 1. */
  messages?: number;
  /** What a summary must re-assert (contract §3). */
  pins?: Pin[];
}

export interface CompactionRequest {
  /** Default: a fresh id; the same id on a retry. */
  requestId?: string;
  /** Default: the policy's floor unit (contract §2: every check compares ranges in it). */
  unit?: Unit;
  /** The original positions the summary will account for (contract §3). */
  summaryInput: Span;
  /** First position kept verbatim. */
  tailStart: number;
  occupancyTokens?: number | null;
}

export interface CommitReport {
  requestId: string;
  unit?: Unit;
  summaryInput: Span;
  tailStart: number;
}

/** The part of the transcript a spill must store, in the unit asked and as whole turns. */
export interface TranscriptRange {
  sessionId: string;
  unit: Unit;
  start: number;
  end: number;
  /** The turns `[firstTurn, endTurn)` whose content covers `[start, end)`. */
  firstTurn: number;
  endTurn: number;
}

/**
 * The orchestrator's transcript: one entry per turn of the range (each placed at its turn's
 * positions; a missing entry holds nothing), or the exact bytes of all its turns as one piece.
 * The spill loop reports only the turns stored and read back, from the first on without a hole
 * (src/client/vouch.ts): a hole at the first turn is a SpillFailed, a later one a SpillCompleted
 * over the turns before it. One piece cannot be checked turn by turn: a reader that returns one
 * and cannot give every turn must throw (SpillFailed).
 */
export type TranscriptReader = (
  range: TranscriptRange,
) => TranscriptContent | Promise<TranscriptContent>;

export interface RequestOptions {
  /** Wait for each verdict (ms); default the client's. */
  timeoutMs?: number;
  /**
   * In-band spill loop: on REFUSE with action SPILL, write the transcript to `store`, read it
   * back, answer SpillCompleted over what was stored (SpillFailed if nothing was) and retry the
   * same requestId, so the call returns the final verdict.
   */
  spill?: { store: SpillStore; transcript: TranscriptReader; maxSpills?: number };
  /**
   * A separate spill worker answers out of band (SpillWorker): on REFUSE with action SPILL, ask
   * again every `pollMs` (default 500) until the verdict is no longer a spill ask or `timeoutMs`
   * (default 30 s) has passed; the last verdict is returned either way.
   */
  awaitSpill?: { pollMs?: number; timeoutMs?: number };
  /** Told every verdict as it comes, the spill loop's intermediate ones included (logs, metrics). */
  onVerdict?: (verdict: Verdict) => void;
}

export interface SessionSnapshot {
  version: 1;
  sessionId: string;
  nextSeq: number;
  policy: Policy | null;
  closed: boolean;
  /** The highest tailStart committed (in the floor unit), clipped to the head. */
  verbatimStart: number;
  /** Where each turn ends, per unit (turn i: `[ends[i-1] ?? 0, ends[i])`). */
  tokenEnds: number[];
  messageEnds: number[];
  /** Events handed to Kafka but not known to be acknowledged, in seq order. */
  pending: ContextEvent[];
}

export interface SessionOptions {
  /**
   * Called with the session's snapshot before each event is sent (the snapshot already lists
   * the event as pending). Persist it, and `GuardClient.resume` it after a crash: no gap, no
   * SEQ_CONFLICT. Without it, `snapshot()` is only safe when nothing is in flight.
   */
  persist?: (snapshot: SessionSnapshot) => void | Promise<void>;
  /** The session's clock: the events' occurredAt and the spill poll's deadline (default Date.now). */
  now?: () => number;
}
