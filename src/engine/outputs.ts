/** Output records of DESIGN §6. Schemas: `schemas/verdict.avsc`, `schemas/spill-request.avsc`, `schemas/audit-record.avsc`. */
import type { Unit } from './events';

export type RuleCode =
  | 'UNKNOWN_SESSION'
  | 'EVENT_GAP'
  | 'UNIT_MISMATCH'
  | 'INVALID_REQUEST'
  | 'FLOOR_NOT_IN_INPUT'
  | 'TRUNCATION_IN_FLOOR'
  | 'SEAM_HOLE'
  | 'TAIL_BELOW_FLOOR'
  | 'EVICTED_PINNED'
  | 'EVICTED_UNCOVERED';

export type Decision = 'APPROVE' | 'REFUSE';
export type Basis = 'INVARIANT_HOLDS' | 'LOSSLESS_SPILL' | 'LOSS_ACKNOWLEDGED';
export type Action = 'NONE' | 'SPILL' | 'HALT';

export interface UnitRange {
  unit: Unit;
  start: number;
  end: number;
}

export interface Reason {
  code: RuleCode;
  message: string;
  holes: UnitRange[];
}

export interface Verdict {
  sessionId: string;
  requestId: string;
  decision: Decision;
  basis: Basis | null;
  action: Action;
  reasons: Reason[];
  rulesChecked: RuleCode[];
  diagnostic: string | null;
  spillRequestId: string | null;
  inputSeq: number;
  requestedAt: number | null;
  decidedAt: number;
  engineVersion: string;
}

export interface SpillRequest {
  spillRequestId: string;
  sessionId: string;
  requestId: string;
  unit: Unit;
  range: { start: number; end: number };
  holes: UnitRange[];
  reasons: Reason[];
  /** Never null: only a REFUSE with action SPILL asks for a spill, and a request whose
   * occurredAt does not decode is INVALID_REQUEST, which HALTs (DESIGN §3, §5). */
  requestedAt: number;
}

export type AuditKind = 'ADVISORY' | 'VIOLATION';
export type AuditCode =
  | 'TRIGGER_NOT_BELOW_CEILING'
  | 'UNIT_MISMATCH'
  | 'LOSS_ACKNOWLEDGED'
  | 'PINNED_EVICTED'
  | 'CONTENT_EVICTED'
  | 'COMMITTED_WITHOUT_APPROVAL'
  | 'APPROVAL_STALE_AT_COMMIT'
  | 'UNPLACEABLE_RANGE'
  | 'REQUEST_ID_REUSED'
  | 'SEQ_CONFLICT'
  | 'SPILL_INCOMPLETE';

export interface AuditRecord {
  kind: AuditKind;
  code: AuditCode;
  sessionId: string;
  message: string;
  /** null for an out-of-band event (contract §4 step 0). */
  inputSeq: null | number;
  requestId: string | null;
  ranges: UnitRange[];
  occurredAt: number;
}
