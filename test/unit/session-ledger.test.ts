/**
 * The client's SessionLedger (src/client/session/ledger.ts), specified as given(events) →
 * when(command) → then(event) or refused: the sequence, the positions in three units, the
 * verbatim start, and snapshot/resume. Pure: no broker, no clock.
 */
import fc from 'fast-check';
import type { ContextEvent, Policy, Unit } from '../../src/engine/events';
import { GuardClosedError, GuardUsageError } from '../../src/client/errors';
import {
  compactionCommitted,
  inBand,
  sessionClosed,
  sessionOpened,
  turnAppended,
} from '../../src/client/events';
import { type SessionCommand, SessionLedger } from '../../src/client/session/ledger';

const SESSION = 's-1';

function policy(unit: Unit): Policy {
  return {
    windowTokens: 100_000,
    triggerTokens: 80_000,
    ceilingTokens: 95_000,
    floor: { unit, span: 2 },
    truncatorUnit: unit,
    coverage: 'STRICT',
    spill: 'ENABLED',
  };
}

const envelope = (seq: number) => ({
  sessionId: SESSION,
  seq,
  eventId: `e-${seq}`,
  occurredAt: 1_000 + seq,
});

/** The events of a session, written out: each at its seq. */
const opened = (unit: Unit = 'TURNS') => inBand(sessionOpened(policy(unit)), envelope(0));
const turn = (seq: number, turn: number, tokens: [number, number], messages: [number, number]) =>
  inBand(
    turnAppended({
      turn,
      tokens: { start: tokens[0], end: tokens[1] },
      messages: { start: messages[0], end: messages[1] },
      role: 'USER',
      pins: [],
    }),
    envelope(seq),
  );
const committed = (seq: number, unit: Unit, end: number) =>
  inBand(
    compactionCommitted({
      requestId: `r-${seq}`,
      unit,
      summaryInput: { start: 0, end },
      tailStart: end,
    }),
    envelope(seq),
  );
const closed = (seq: number) => inBand(sessionClosed(), envelope(seq));

/** Three turns: tokens [0,5) [5,12) [12,20), messages [0,1) [1,3) [3,4). */
const threeTurns = (unit: Unit = 'TURNS'): ContextEvent[] => [
  opened(unit),
  turn(1, 0, [0, 5], [0, 1]),
  turn(2, 1, [5, 12], [1, 3]),
  turn(3, 2, [12, 20], [3, 4]),
];

function given(...events: ContextEvent[]) {
  const ledger = SessionLedger.fresh(SESSION);
  for (const e of events) ledger.record(e);
  return {
    ledger,
    when(command: SessionCommand) {
      const next = ledger.seq;
      const decide = () =>
        ledger.stamp(ledger.decide(command), { eventId: 'e-next', occurredAt: 5_000 });
      return {
        /** The command means this event (its envelope: the next seq). */
        then(body: Record<string, unknown>) {
          expect(decide()).toEqual({
            ...body,
            sessionId: SESSION,
            seq: next,
            eventId: 'e-next',
            occurredAt: 5_000,
          });
        },
        /** The command is refused, and the ledger is as it was. */
        thenRefused(error: jest.Constructable, fields: Record<string, unknown> = {}) {
          const before = ledger.snapshot();
          expect(decide).toThrow(error);
          try {
            decide();
          } catch (e) {
            expect(e).toMatchObject(fields);
          }
          expect(ledger.snapshot()).toEqual(before);
        },
      };
    },
  };
}

describe('SessionLedger: the sequence', () => {
  it('given nothing, open is SessionOpened at seq 0', () => {
    given()
      .when({ type: 'open', policy: policy('TURNS') })
      .then({ type: 'SessionOpened', policy: policy('TURNS') });
  });

  it('given an open session, open again is refused (nothing sent)', () => {
    given(opened())
      .when({ type: 'open', policy: policy('TURNS') })
      .thenRefused(GuardUsageError, { field: 'open' });
  });

  it('given a closed session, every command is refused with GuardClosedError', () => {
    const commands: SessionCommand[] = [
      { type: 'appendTurn', role: 'USER', tokens: 3 },
      { type: 'close' },
      { type: 'spillFailed', spillRequestId: 'x', error: 'e' },
    ];
    for (const c of commands) given(opened(), closed(1)).when(c).thenRefused(GuardClosedError);
  });

  it('each recorded event moves the next seq to one past its own', () => {
    const { ledger } = given(...threeTurns());
    expect(ledger.seq).toBe(4);
    ledger.record(closed(4));
    expect([ledger.seq, ledger.closed]).toEqual([5, true]);
  });
});

describe('SessionLedger: positions in three units', () => {
  it('given three turns, the next turn starts at each head (tokens 20, messages 4, turn 3)', () => {
    given(...threeTurns())
      .when({ type: 'appendTurn', role: 'ASSISTANT', tokens: 6, messages: 2, pins: ['PLAN'] })
      .then({
        type: 'TurnAppended',
        turn: 3,
        tokens: { start: 20, end: 26 },
        messages: { start: 4, end: 6 },
        role: 'ASSISTANT',
        pins: ['PLAN'],
      });
  });

  it('a turn holds one message unless told otherwise, and no pins', () => {
    given(opened())
      .when({ type: 'appendTurn', role: 'USER', tokens: 4 })
      .then({
        type: 'TurnAppended',
        turn: 0,
        tokens: { start: 0, end: 4 },
        messages: { start: 0, end: 1 },
        role: 'USER',
        pins: [],
      });
  });

  it('given no SessionOpened, a turn is refused: open(policy) first', () => {
    given()
      .when({ type: 'appendTurn', role: 'USER', tokens: 4 })
      .thenRefused(GuardUsageError, {
        field: 'appendTurn',
        message: expect.stringMatching(/open\(policy\) first/),
      });
  });

  it('an empty turn is refused in every unit', () => {
    given(opened())
      .when({ type: 'appendTurn', role: 'USER', tokens: 0 })
      .thenRefused(GuardUsageError, { field: 'tokens' });
    given(opened())
      .when({ type: 'appendTurn', role: 'USER', tokens: 3, messages: 0 })
      .thenRefused(GuardUsageError, { field: 'messages' });
  });

  it('head, position and startOf read the recorded turns in each unit', () => {
    const { ledger } = given(...threeTurns());
    expect([ledger.head('TURNS'), ledger.head('TOKENS'), ledger.head('MESSAGES')]).toEqual([
      3, 20, 4,
    ]);
    expect(ledger.position(1)).toEqual({
      turn: 1,
      tokens: { start: 5, end: 12 },
      messages: { start: 1, end: 3 },
    });
    expect([
      ledger.startOf(2, 'TOKENS'),
      ledger.startOf(2, 'MESSAGES'),
      ledger.startOf(3, 'TOKENS'),
    ]).toEqual([12, 3, 20]);
    expect(() => ledger.position(3)).toThrow(GuardUsageError);
  });

  it('truncation must lie within the head of its unit', () => {
    given(...threeTurns())
      .when({ type: 'truncated', unit: 'TOKENS', range: { start: 0, end: 12 } })
      .then({
        type: 'Truncated',
        unit: 'TOKENS',
        range: { start: 0, end: 12 },
        reason: 'BUDGET_ENFORCEMENT',
      });
    given(...threeTurns())
      .when({ type: 'truncated', unit: 'MESSAGES', range: { start: 0, end: 5 } })
      .thenRefused(GuardUsageError, { field: 'range.end' });
  });

  it('fast-check: for any turn sizes, each turn starts where the previous ended and the heads are the sums', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tokens: fc.integer({ min: 1, max: 5_000 }),
            messages: fc.integer({ min: 1, max: 9 }),
          }),
          {
            maxLength: 60,
          },
        ),
        (sizes) => {
          const { ledger } = given(opened('TOKENS'));
          for (const s of sizes)
            ledger.record(
              ledger.stamp(ledger.decide({ type: 'appendTurn', role: 'USER', ...s }), {
                eventId: `t-${ledger.seq}`,
                occurredAt: ledger.seq,
              }),
            );
          let tokens = 0;
          let messages = 0;
          sizes.forEach((s, i) => {
            expect(ledger.position(i)).toEqual({
              turn: i,
              tokens: { start: tokens, end: tokens + s.tokens },
              messages: { start: messages, end: messages + s.messages },
            });
            tokens += s.tokens;
            messages += s.messages;
          });
          expect([ledger.head('TURNS'), ledger.head('TOKENS'), ledger.head('MESSAGES')]).toEqual([
            sizes.length,
            tokens,
            messages,
          ]);
          expect(ledger.seq).toBe(sizes.length + 1);
        },
      ),
    );
  });
});

describe('SessionLedger: compaction requests and commits', () => {
  it("a request defaults to the floor unit and copies only the span's bounds", () => {
    given(...threeTurns('TOKENS'))
      .when({
        type: 'requestCompaction',
        requestId: 'r',
        summaryInput: { start: 0, end: 12, extra: true } as never,
        tailStart: 12,
        occupancyTokens: 900,
      })
      .then({
        type: 'CompactionRequested',
        requestId: 'r',
        unit: 'TOKENS',
        summaryInput: { start: 0, end: 12 },
        tailStart: 12,
        occupancyTokens: 900,
      });
  });

  it('a tail beyond the head is refused, naming the head and its unit', () => {
    given(...threeTurns())
      .when({
        type: 'requestCompaction',
        requestId: 'r',
        summaryInput: { start: 0, end: 1 },
        tailStart: 4,
      })
      .thenRefused(GuardUsageError, {
        field: 'tailStart',
        message: expect.stringMatching(/beyond the head \(3 TURNS\)/),
      });
  });

  it('given a commit in the floor unit, a tail below it is refused; a commit in another unit moves nothing', () => {
    given(...threeTurns(), committed(4, 'TURNS', 2))
      .when({
        type: 'requestCompaction',
        requestId: 'r',
        summaryInput: { start: 0, end: 1 },
        tailStart: 1,
      })
      .thenRefused(GuardUsageError, {
        field: 'tailStart',
        message: expect.stringMatching(/below the verbatim start 2/),
      });
    given(...threeTurns(), committed(4, 'TOKENS', 12))
      .when({
        type: 'requestCompaction',
        requestId: 'r',
        summaryInput: { start: 0, end: 1 },
        tailStart: 1,
      })
      .then({
        type: 'CompactionRequested',
        requestId: 'r',
        unit: 'TURNS',
        summaryInput: { start: 0, end: 1 },
        tailStart: 1,
        occupancyTokens: null,
      });
  });

  it('a commit recorded beyond the head moves the verbatim start only to the head', () => {
    const { ledger } = given(...threeTurns(), committed(4, 'TURNS', 7));
    expect(ledger.snapshot().verbatimStart).toBe(3);
  });
});

describe('SessionLedger: snapshot and resume', () => {
  it('recorded events are pending until acknowledged; a resumed ledger continues where the snapshot was', () => {
    const { ledger } = given(...threeTurns('MESSAGES'));
    ledger.acknowledged(['e-0', 'e-1']);
    const snapshot = ledger.snapshot();
    expect(snapshot).toMatchObject({
      version: 1,
      sessionId: SESSION,
      nextSeq: 4,
      closed: false,
      tokenEnds: [5, 12, 20],
      messageEnds: [1, 3, 4],
      pending: [threeTurns()[2], threeTurns()[3]],
    });
    const resumed = SessionLedger.resume(snapshot);
    expect(resumed.snapshot()).toEqual(snapshot);
    expect(resumed.lastOccurredAt).toBe(1_003);
    expect(
      resumed.stamp(resumed.decide({ type: 'close' }), { eventId: 'x', occurredAt: 1 }),
    ).toMatchObject({ seq: 4 });
  });

  it('a snapshot of another version, or without a sessionId, is refused', () => {
    const snapshot = given(opened()).ledger.snapshot();
    expect(() => SessionLedger.resume({ ...snapshot, version: 2 as never })).toThrow(
      expect.objectContaining({ field: 'snapshot.version' }),
    );
    expect(() => SessionLedger.resume({ ...snapshot, sessionId: '' })).toThrow(
      expect.objectContaining({ field: 'sessionId' }),
    );
  });
});
