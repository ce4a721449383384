/**
 * Output records of contract §6. The types are generated from `schemas/verdict.avsc`,
 * `schemas/spill-request.avsc` and `schemas/audit-record.avsc` into `contract.ts`
 * (scripts/gen-types.mjs); the engine adds which kind each audit code is (§6).
 */
import type { AuditCode, AuditKind } from './contract';

export type {
  RuleCode,
  Decision,
  Basis,
  Action,
  UnitRange,
  Reason,
  Verdict,
  SpillRequest,
  AuditKind,
  AuditCode,
  AuditRecord,
} from './contract';
export {
  RULE_CODE_SYMBOLS,
  DECISION_SYMBOLS,
  BASIS_SYMBOLS,
  ACTION_SYMBOLS,
  AUDIT_KIND_SYMBOLS,
  AUDIT_CODE_SYMBOLS,
} from './contract';

/**
 * The kind of every audit code (contract §6): a code the schema gains fails to compile here
 * until its kind is given.
 */
export const AUDIT_KIND_OF: Readonly<Record<AuditCode, AuditKind>> = {
  TRIGGER_NOT_BELOW_CEILING: 'ADVISORY',
  UNIT_MISMATCH: 'ADVISORY',
  LOSS_ACKNOWLEDGED: 'ADVISORY',
  PINNED_EVICTED: 'ADVISORY',
  CONTENT_EVICTED: 'ADVISORY',
  COMMITTED_WITHOUT_APPROVAL: 'VIOLATION',
  APPROVAL_STALE_AT_COMMIT: 'VIOLATION',
  UNPLACEABLE_RANGE: 'VIOLATION',
  REQUEST_ID_REUSED: 'VIOLATION',
  SEQ_CONFLICT: 'VIOLATION',
  SPILL_INCOMPLETE: 'VIOLATION',
  UNAUTHORIZED_EVENT: 'VIOLATION',
  STATE_COARSENED: 'ADVISORY',
};
