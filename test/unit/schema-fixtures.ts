/** Sample events shared by the schema tests: the smallest valid JSON of each type (fields with
 * a default left out) and the event it decodes to (defaults applied, contract §3). */
import type { ContextEvent, EventType } from '../../src/engine/events';
import type { AuditRecord, SpillRequest, Verdict } from '../../src/engine/outputs';

const envelope = (type: EventType, seq: number) => ({
  type,
  sessionId: 'session-1',
  seq,
  eventId: `event-${seq}`,
  occurredAt: 1_700_000_000_000 + seq,
});

export interface Sample<E extends ContextEvent = ContextEvent> {
  minimal: Record<string, unknown>;
  decoded: E;
}

type Samples = { [T in EventType]: Sample<Extract<ContextEvent, { type: T }>> };

const policy = {
  windowTokens: 200_000,
  triggerTokens: 160_000,
  ceilingTokens: 180_000,
  floor: { unit: 'TURNS', span: 12 },
  truncatorUnit: 'TURNS',
} as const;

export const SAMPLES: Samples = {
  SessionOpened: {
    minimal: { ...envelope('SessionOpened', 0), policy },
    decoded: {
      ...envelope('SessionOpened', 0),
      type: 'SessionOpened',
      policy: { ...policy, floor: { ...policy.floor }, coverage: 'STRICT', spill: 'ENABLED' },
    },
  },
  TurnAppended: {
    minimal: {
      ...envelope('TurnAppended', 1),
      turn: 0,
      tokens: { start: 0, end: 120 },
      messages: { start: 0, end: 1 },
      role: 'USER',
    },
    decoded: {
      ...envelope('TurnAppended', 1),
      type: 'TurnAppended',
      turn: 0,
      tokens: { start: 0, end: 120 },
      messages: { start: 0, end: 1 },
      role: 'USER',
      pins: [],
    },
  },
  Truncated: {
    minimal: { ...envelope('Truncated', 2), unit: 'TURNS', range: { start: 0, end: 8 } },
    decoded: {
      ...envelope('Truncated', 2),
      type: 'Truncated',
      unit: 'TURNS',
      range: { start: 0, end: 8 },
      reason: 'BUDGET_ENFORCEMENT',
    },
  },
  CompactionRequested: {
    minimal: {
      ...envelope('CompactionRequested', 3),
      requestId: 'request-1',
      unit: 'TURNS',
      summaryInput: { start: 0, end: 28 },
      tailStart: 28,
    },
    decoded: {
      ...envelope('CompactionRequested', 3),
      type: 'CompactionRequested',
      requestId: 'request-1',
      unit: 'TURNS',
      summaryInput: { start: 0, end: 28 },
      tailStart: 28,
      occupancyTokens: null,
    },
  },
  CompactionCommitted: {
    minimal: {
      ...envelope('CompactionCommitted', 4),
      requestId: 'request-1',
      unit: 'TURNS',
      summaryInput: { start: 0, end: 28 },
      tailStart: 28,
    },
    decoded: {
      ...envelope('CompactionCommitted', 4),
      type: 'CompactionCommitted',
      requestId: 'request-1',
      unit: 'TURNS',
      summaryInput: { start: 0, end: 28 },
      tailStart: 28,
    },
  },
  SpillCompleted: {
    minimal: {
      ...envelope('SpillCompleted', 5),
      spillRequestId: 'session-1:request-1:3',
      handle: 's3://spills/session-1/0-40',
      unit: 'TURNS',
      range: { start: 0, end: 40 },
    },
    decoded: {
      ...envelope('SpillCompleted', 5),
      type: 'SpillCompleted',
      spillRequestId: 'session-1:request-1:3',
      handle: 's3://spills/session-1/0-40',
      unit: 'TURNS',
      range: { start: 0, end: 40 },
      signature: null,
    },
  },
  SpillFailed: {
    minimal: {
      ...envelope('SpillFailed', 6),
      spillRequestId: 'session-1:request-1:3',
      error: 'disk full',
    },
    decoded: {
      ...envelope('SpillFailed', 6),
      type: 'SpillFailed',
      spillRequestId: 'session-1:request-1:3',
      error: 'disk full',
      signature: null,
    },
  },
  LossAcknowledged: {
    minimal: {
      ...envelope('LossAcknowledged', 7),
      unit: 'TURNS',
      range: { start: 0, end: 8 },
      by: 'oncall@example.com',
      reason: 'turns 0-8 were small talk',
    },
    decoded: {
      ...envelope('LossAcknowledged', 7),
      type: 'LossAcknowledged',
      unit: 'TURNS',
      range: { start: 0, end: 8 },
      by: 'oncall@example.com',
      reason: 'turns 0-8 were small talk',
      signature: null,
    },
  },
  SessionClosed: {
    minimal: { ...envelope('SessionClosed', 8) },
    decoded: { ...envelope('SessionClosed', 8), type: 'SessionClosed' },
  },
};

/** A copy of the minimal sample of `type` with `changes` merged in (undefined deletes a field). */
export function withFields(
  type: EventType,
  changes: Record<string, unknown>,
): Record<string, unknown> {
  const copy: Record<string, unknown> = structuredClone(SAMPLES[type].minimal);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete copy[key];
    else copy[key] = value;
  }
  return copy;
}

/** One record of each output topic (contract §6), as the engine would publish them. */
export const VERDICT: Verdict = {
  sessionId: 'session-1',
  requestId: 'request-1',
  decision: 'REFUSE',
  basis: null,
  action: 'SPILL',
  reasons: [
    {
      code: 'EVICTED_PINNED',
      message: 'pinned turns [0, 8) left the context before any summary saw them',
      holes: [{ unit: 'TURNS', start: 0, end: 8 }],
    },
  ],
  rulesChecked: ['EVENT_GAP', 'UNIT_MISMATCH', 'INVALID_REQUEST', 'EVICTED_PINNED'],
  diagnostic: 'REFUSE (SPILL): turns [0, 8) were evicted unsummarized.',
  spillRequestId: 'session-1:request-1:3',
  inputSeq: 3,
  requestEventId: 'event-3',
  requestedAt: 1_700_000_000_003,
  decidedAt: 1_700_000_000_010,
  engineVersion: '0.1.0',
};

export const APPROVAL: Verdict = {
  ...VERDICT,
  decision: 'APPROVE',
  basis: 'INVARIANT_HOLDS',
  action: 'NONE',
  reasons: [],
  diagnostic: null,
  spillRequestId: null,
};

export const SPILL_REQUEST: SpillRequest = {
  spillRequestId: 'session-1:request-1:3',
  sessionId: 'session-1',
  requestId: 'request-1',
  requestEventId: 'event-3',
  unit: 'TURNS',
  range: { start: 0, end: 40 },
  holes: [{ unit: 'TURNS', start: 0, end: 8 }],
  reasons: VERDICT.reasons,
  requestedAt: 1_700_000_000_003,
};

export const AUDIT_RECORD: AuditRecord = {
  kind: 'ADVISORY',
  code: 'PINNED_EVICTED',
  sessionId: 'session-1',
  message: 'pinned turns [0, 8) were truncated before any summary saw them',
  inputSeq: 2,
  requestId: null,
  ranges: [{ unit: 'TURNS', start: 0, end: 8 }],
  occurredAt: 1_700_000_000_002,
};
