/**
 * The "typical" session of the state-size figure (bench/README.md): 200 turns, 3 pins
 * (constraint, plan, a commitment), 2 truncations (one covered by the summary, one the seed's
 * kind), 3 compactions (4 requests: one refused and retried after 1 spill; 3 commits).
 */
import type { ContextEvent, Policy, Role } from '../src/engine/events';

export const TYPICAL_POLICY: Policy = {
  windowTokens: 128_000,
  triggerTokens: 100_000,
  ceilingTokens: 110_000,
  floor: { unit: 'TURNS', span: 12 },
  truncatorUnit: 'TURNS',
  coverage: 'STRICT',
  spill: 'ENABLED',
};

const ROLES: readonly Role[] = ['USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT', 'ASSISTANT'];

/** The typical session's events, and the decisions its four requests must get. */
export function typicalSession(sessionId = 'typical-session'): {
  events: ContextEvent[];
  expectedDecisions: string[];
} {
  const events: ContextEvent[] = [];
  const t0 = 1_767_225_600_000;
  let seq = 0;
  let turn = 0;
  let tokens = 0;
  let messages = 0;
  const env = () => {
    const s = seq++;
    return { sessionId, seq: s, eventId: `${sessionId}-${s}`, occurredAt: t0 + 1000 * s };
  };
  const turnsUpTo = (end: number) => {
    for (; turn < end; turn++) {
      const role: Role = turn === 0 ? 'SYSTEM' : turn === 1 ? 'USER' : ROLES[turn % ROLES.length]!;
      const pins =
        turn === 1
          ? ['CONSTRAINT' as const]
          : turn === 2
            ? ['PLAN' as const]
            : turn === 90
              ? ['COMMITMENT' as const]
              : [];
      const t = 200 + ((turn * 137) % 1100);
      const m = role === 'TOOL_RESULT' ? 2 : 1;
      events.push({
        type: 'TurnAppended',
        ...env(),
        turn,
        tokens: { start: tokens, end: tokens + t },
        messages: { start: messages, end: messages + m },
        role: turn === 2 ? 'ASSISTANT' : role,
        pins,
      });
      tokens += t;
      messages += m;
    }
  };
  const request = (requestId: string, sIn: number, eIn: number, tailStart: number) => {
    const e = env();
    events.push({
      type: 'CompactionRequested',
      ...e,
      requestId,
      unit: 'TURNS',
      summaryInput: { start: sIn, end: eIn },
      tailStart,
      occupancyTokens: 100_500,
    });
    return e.seq;
  };
  const commit = (requestId: string, sIn: number, eIn: number, tailStart: number) =>
    events.push({
      type: 'CompactionCommitted',
      ...env(),
      requestId,
      unit: 'TURNS',
      summaryInput: { start: sIn, end: eIn },
      tailStart,
    });
  const truncate = (start: number, end: number) =>
    events.push({
      type: 'Truncated',
      ...env(),
      unit: 'TURNS',
      range: { start, end },
      reason: 'BUDGET_ENFORCEMENT',
    });

  events.push({ type: 'SessionOpened', ...env(), policy: TYPICAL_POLICY });
  turnsUpTo(60);
  // Compaction 1: the summary reads two tail turns too, which are then dropped without loss.
  request('c-1', 0, 50, 48);
  commit('c-1', 0, 50, 48);
  truncate(48, 50);
  turnsUpTo(120);
  request('c-2', 0, 100, 100);
  commit('c-2', 0, 100, 100);
  turnsUpTo(160);
  // Budget enforcement drops the oldest verbatim turns before the next compaction (the seed).
  truncate(100, 106);
  turnsUpTo(170);
  const refusedSeq = request('c-3', 0, 150, 150);
  events.push({
    type: 'SpillCompleted',
    ...env(),
    spillRequestId: `${sessionId}:c-3:${refusedSeq}`,
    handle: `s3://spills/${sessionId}/c-3`,
    unit: 'TURNS',
    range: { start: 0, end: 170 },
    signature: null,
  });
  request('c-3', 0, 150, 150);
  commit('c-3', 0, 150, 150);
  turnsUpTo(200);
  return { events, expectedDecisions: ['APPROVE', 'APPROVE', 'REFUSE', 'APPROVE'] };
}
