/**
 * Input events of contract §3 (topic `agent.context-changes`, key = sessionId), in the flat
 * JSON form. The types are generated from `schemas/context-change-event.avsc` into
 * `contract.ts` (scripts/gen-types.mjs): the schema is their one source, and the engine adds
 * only what is its own (the answered malformed request).
 */
import { CONTEXT_CHANGE_EVENT_TYPES, type ContextChangeEvent } from './contract';

export type {
  Unit,
  Role,
  Pin,
  Coverage,
  SpillMode,
  TruncationReason,
  Span,
  Policy,
  Floor,
  SessionOpened,
  TurnAppended,
  Truncated,
  CompactionRequested,
  CompactionCommitted,
  SpillCompleted,
  SpillFailed,
  LossAcknowledged,
  SessionClosed,
  Signature,
} from './contract';
export {
  UNIT_SYMBOLS,
  ROLE_SYMBOLS,
  PIN_SYMBOLS,
  COVERAGE_SYMBOLS,
  SPILL_MODE_SYMBOLS,
  TRUNCATION_REASON_SYMBOLS,
} from './contract';

/** One input event: SpillCompleted, SpillFailed and LossAcknowledged may have `seq` null (out of band). */
export type ContextEvent = ContextChangeEvent;

export type EventType = ContextEvent['type'];

export const EVENT_TYPES: readonly EventType[] = CONTEXT_CHANGE_EVENT_TYPES;

/**
 * contract §3: a malformed CompactionRequested whose sessionId, seq and requestId decode is
 * dead-lettered *and* answered (REFUSE, INVALID_REQUEST, HALT), so no orchestrator waits.
 */
export interface MalformedRequest {
  type: 'MalformedRequest';
  sessionId: string;
  seq: number;
  requestId: string;
  /** null when eventId did not decode (absent, null, not a string, or over its bound). */
  eventId: string | null;
  /** null when occurredAt did not decode. */
  occurredAt: number | null;
  error: string;
}
