/**
 * What the decision of contract §5 works on and finds: the request as decided (a
 * CompactionRequested, or a stored one decided again) and the evaluation of the rules. Apart
 * from decide.ts so that the readable messages (messages.ts) depend on these types only.
 */
import type { Span, Unit } from './events';
import type { RuleCode } from './outputs';
import type { IntervalSet } from './intervals';

export interface RequestInput {
  requestId: string;
  /**
   * The request's own eventId, named in its verdict and spill request (`requestEventId`): a
   * producer that writes a request under the session's seq gets a verdict too, so the
   * orchestrator takes only the verdict of the eventId it sent (contract §6).
   */
  eventId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  seq: number;
  occurredAt: number;
}

/** A rule that fired: its unhealed holes (empty for a rule without a hole). */
export interface FiredRule {
  code: RuleCode;
  holes: IntervalSet;
  /** For a rule without a hole: `[0,t) − (P ∪ A)`, what a spill would have to store. */
  spillNeed: IntervalSet;
}

export interface Evaluation {
  rulesChecked: RuleCode[];
  fired: FiredRule[];
  /** Would the request be refused with A left out (P alone heals)? */
  refusedWithoutAck: boolean;
  /** The unit of every hole: U for a known session, the request's for an unknown one. */
  holeUnit: Unit;
}
