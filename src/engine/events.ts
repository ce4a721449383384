/**
 * Input events of DESIGN §3 (topic `agent.context-changes`, key = sessionId), in the flat
 * JSON form. The Avro schema `schemas/context-change-event.avsc` is the source of truth;
 * `test/unit/schema-types.test.ts` checks these types against it.
 */
export type Unit = 'TURNS' | 'TOKENS' | 'MESSAGES';
export type Role = 'SYSTEM' | 'USER' | 'ASSISTANT' | 'TOOL_CALL' | 'TOOL_RESULT';
export type Pin = 'CONSTRAINT' | 'PLAN' | 'COMMITMENT' | 'OPEN_TOOL_CALL';
export type Coverage = 'STRICT' | 'PINNED';
export type SpillMode = 'ENABLED' | 'DISABLED';
export type TruncationReason = 'BUDGET_ENFORCEMENT' | 'MANUAL' | 'SUMMARY_EVICTED';

/** Half-open `[start, end)`. */
export interface Span {
  start: number;
  end: number;
}

export interface Policy {
  windowTokens: number;
  triggerTokens: number;
  ceilingTokens: number;
  floor: { unit: Unit; span: number };
  truncatorUnit: Unit;
  coverage: Coverage;
  spill: SpillMode;
}

interface Envelope {
  sessionId: string;
  seq: number;
  eventId: string;
  occurredAt: number;
}

/**
 * The envelope of the three events that may come out of band (contract §3): `seq` null, sent by
 * someone who does not own the session's sequence (an operator's tool, a spill service).
 */
interface OutOfBandEnvelope extends Omit<Envelope, 'seq'> {
  seq: null | number;
}

export interface SessionOpened extends Envelope {
  type: 'SessionOpened';
  policy: Policy;
}
export interface TurnAppended extends Envelope {
  type: 'TurnAppended';
  turn: number;
  tokens: Span;
  messages: Span;
  role: Role;
  pins: Pin[];
}
export interface Truncated extends Envelope {
  type: 'Truncated';
  unit: Unit;
  range: Span;
  reason: TruncationReason;
}
export interface CompactionRequested extends Envelope {
  type: 'CompactionRequested';
  requestId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  occupancyTokens: number | null;
}
export interface CompactionCommitted extends Envelope {
  type: 'CompactionCommitted';
  requestId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
}
export interface SpillCompleted extends OutOfBandEnvelope {
  type: 'SpillCompleted';
  spillRequestId: string;
  handle: string;
  unit: Unit;
  range: Span;
}
export interface SpillFailed extends OutOfBandEnvelope {
  type: 'SpillFailed';
  spillRequestId: string;
  error: string;
}
export interface LossAcknowledged extends OutOfBandEnvelope {
  type: 'LossAcknowledged';
  unit: Unit;
  range: Span;
  by: string;
  reason: string;
}
export interface SessionClosed extends Envelope {
  type: 'SessionClosed';
}

export type ContextEvent =
  | SessionOpened
  | TurnAppended
  | Truncated
  | CompactionRequested
  | CompactionCommitted
  | SpillCompleted
  | SpillFailed
  | LossAcknowledged
  | SessionClosed;

export type EventType = ContextEvent['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'SessionOpened',
  'TurnAppended',
  'Truncated',
  'CompactionRequested',
  'CompactionCommitted',
  'SpillCompleted',
  'SpillFailed',
  'LossAcknowledged',
  'SessionClosed',
];

/**
 * DESIGN §3: a malformed CompactionRequested whose sessionId, seq and requestId decode is
 * dead-lettered *and* answered (REFUSE, INVALID_REQUEST, HALT), so no orchestrator waits.
 */
export interface MalformedRequest {
  type: 'MalformedRequest';
  sessionId: string;
  seq: number;
  requestId: string;
  /** null when occurredAt did not decode. */
  occurredAt: number | null;
  error: string;
}
