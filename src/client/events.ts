/**
 * The events the client writes (contract §3), built typed: a body says what happened, the
 * envelope where it stands (sessionId, seq, eventId, occurredAt). An in-band event takes the
 * session's next seq; an out-of-band one (SpillCompleted, SpillFailed, LossAcknowledged from an
 * operator's tool or a spill service) has seq null and takes no place in the sequence.
 */
import type {
  CompactionCommitted,
  CompactionRequested,
  ContextEvent,
  LossAcknowledged,
  Pin,
  Policy,
  Role,
  SessionClosed,
  SessionOpened,
  Signature,
  Span,
  SpillCompleted,
  SpillFailed,
  Truncated,
  TruncationReason,
  TurnAppended,
  Unit,
} from '../engine/events';
import type { SignableEvent } from '../engine/authority';

/** Where an in-band event stands: its session, its place in the sequence, its id and time. */
export interface Envelope {
  sessionId: string;
  seq: number;
  eventId: string;
  occurredAt: number;
}

type Distribute<E, K extends PropertyKey> = E extends unknown ? Omit<E, K> : never;

/** An in-band event without its envelope. */
export type EventBody = Distribute<ContextEvent, keyof Envelope>;
type Body<E extends ContextEvent> = Omit<E, keyof Envelope>;

export const sessionOpened = (policy: Policy): Body<SessionOpened> => ({
  type: 'SessionOpened',
  policy,
});

export const turnAppended = (t: {
  turn: number;
  tokens: Span;
  messages: Span;
  role: Role;
  pins: Pin[];
}): Body<TurnAppended> => ({ type: 'TurnAppended', ...t });

export const truncated = (unit: Unit, range: Span, reason: TruncationReason): Body<Truncated> => ({
  type: 'Truncated',
  unit,
  range,
  reason,
});

export const compactionRequested = (r: {
  requestId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
  occupancyTokens: number | null;
}): Body<CompactionRequested> => ({ type: 'CompactionRequested', ...r });

export const compactionCommitted = (c: {
  requestId: string;
  unit: Unit;
  summaryInput: Span;
  tailStart: number;
}): Body<CompactionCommitted> => ({ type: 'CompactionCommitted', ...c });

export const spillCompleted = (s: {
  spillRequestId: string;
  handle: string;
  unit: Unit;
  range: Span;
}): Body<SpillCompleted> => ({ type: 'SpillCompleted', ...s, signature: null });

export const spillFailed = (s: { spillRequestId: string; error: string }): Body<SpillFailed> => ({
  type: 'SpillFailed',
  ...s,
  signature: null,
});

export const lossAcknowledged = (a: {
  unit: Unit;
  range: Span;
  by: string;
  reason: string;
}): Body<LossAcknowledged> => ({ type: 'LossAcknowledged', ...a, signature: null });

export const sessionClosed = (): Body<SessionClosed> => ({ type: 'SessionClosed' });

/** The in-band event: the body in its envelope. */
export function inBand(body: EventBody, envelope: Envelope): ContextEvent {
  return { ...body, ...envelope };
}

/** Each of `E` (distributed over a union) without seq, eventId and occurredAt. */
type OutOfBandBody<E extends SignableEvent> = E extends unknown
  ? Omit<E, 'seq' | 'eventId' | 'occurredAt' | 'signature'> & { signature?: Signature | null }
  : never;

/**
 * What an out-of-band sender gives: a signable event (contract §3: only those may come out of
 * band) without seq, eventId and occurredAt.
 */
export type OutOfBandEvent = OutOfBandBody<SignableEvent>;

/** The out-of-band event: seq null, unsigned unless it carries a signature already. */
export function outOfBand(
  event: OutOfBandEvent,
  stamp: { eventId: string; occurredAt: number },
): SignableEvent {
  return { ...event, seq: null, ...stamp, signature: event.signature ?? null };
}
