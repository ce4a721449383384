/**
 * Containment per record (src/kafka/batch/planner.ts, contract §8): whatever the processor's own
 * code throws on one record (reading the state, the engine, the output encoder, the serializer),
 * or an output too large for its topic, dead-letters that record with a code naming the stage,
 * leaves its session's state exactly as before the record, answers a CompactionRequested anyway
 * (REFUSE, INVALID_REQUEST, HALT), and the rest of the batch is planned as if the record were a
 * dead letter. The failing stages are injected through PlanContext.
 */
import { Fleet, engineOptions } from '../../src/engine';
import type { CompactionRequested, ContextEvent } from '../../src/engine/events';
import type { EngineInput, EngineOptions } from '../../src/engine/evolve';
import { serializeState } from '../../src/engine/serialize';
import type { SessionState } from '../../src/engine/state';
import { evolveInPlace } from '../../src/engine/step';
import { decodeForBatch } from '../../src/kafka/batch/decoder';
import {
  PlanLessons,
  type BatchPlan,
  type OutputEncoder,
  type PlanContext,
} from '../../src/kafka/batch/plan';
import { planBatch } from '../../src/kafka/batch/planBatch';
import { BatchPlanner } from '../../src/kafka/batch/planner';
import type { DecodedRecord, RawRecord } from '../../src/kafka/records';
import { SessionStates } from '../../src/kafka/sessionStates';
import type { RegistryCodec } from '../../src/registry/codec';
import { verdictType } from '../../src/schema/schemas';
import { SessionBuilder } from '../support/sessionBuilder';
import { AVRO_BODIES, DECIDED_AT, planContext } from '../support/planContext';

const options = engineOptions();
const ENCODER = AVRO_BODIES;
const BATCH = { topic: 'in', partition: 2 };

const context = planContext;

const raw = (e: ContextEvent, offset: number): RawRecord => ({
  key: Buffer.from(e.sessionId),
  value: Buffer.from(JSON.stringify(e)),
  offset: String(offset),
});

function plan(events: readonly ContextEvent[], ctx: PlanContext): BatchPlan {
  const planner = new BatchPlanner(BATCH, ctx);
  events.forEach((e, i) => planner.add(raw(e, i), { ok: true, input: e }));
  return planner.finish(String(events.length));
}

/** A session with a policy and turns, then a request that a spill would answer (REFUSE, SPILL). */
function session(id: string): SessionBuilder {
  return new SessionBuilder(id, 1_767_229_200_000).open().turns(12, 100, ['CONSTRAINT']);
}

/** The states the engine alone reaches over `events` (what a plan must end with). */
function folded(events: readonly ContextEvent[]): Map<string, SessionState> {
  const fleet = new Fleet(options);
  for (const e of events) fleet.process(e, DECIDED_AT);
  return new Map(fleet.entries());
}

const dlq = (p: BatchPlan) =>
  (p.sends.get('dlq') ?? []).map((m) => ({
    code: String(m.headers!['cg.error.code']),
    offset: String(m.headers!['cg.source.offset']),
    message: String(m.headers!['cg.error.message']),
  }));

const verdicts = (p: BatchPlan) =>
  (p.sends.get('verdicts') ?? []).map((m) => verdictType.fromBuffer(m.value as Buffer));

const changelogStates = (p: BatchPlan) =>
  new Map(
    (p.sends.get('changelog') ?? [])
      .filter((m) => !String(m.key).startsWith('\u0000'))
      .map((m) => [String(m.key), m.value as Buffer]),
  );

/** An engine step that throws on the event with `eventId`, after scribbling on the state. */
function throwingOn(eventId: string) {
  return (s: SessionState | undefined, e: EngineInput, at: number, o: EngineOptions) => {
    if ('eventId' in e && e.eventId === eventId) {
      if (s !== undefined) {
        s.lastSeq = 999_999;
        s.pins = [0, 1_000_000];
        s.verdicts.length = 0;
      }
      throw new TypeError('boom');
    }
    return evolveInPlace(s, e, at, o);
  };
}

describe('a record the engine throws on', () => {
  it('is an ENGINE_FAILED dead letter; its session goes on from the state before it, as if the record were not there', () => {
    const a = session('a').turns(3).request('r1', 'TURNS', 0, 10, 10).events;
    const b = session('b').turns(2).events;
    const interleaved = [...a.slice(0, 10), ...b, ...a.slice(10)];
    const poison = a[12]!;
    const p = plan(interleaved, context({ step: throwingOn(poison.eventId) }));

    expect(dlq(p)).toEqual([
      {
        code: 'ENGINE_FAILED',
        offset: String(interleaved.indexOf(poison)),
        message: expect.stringContaining('TypeError: boom'),
      },
    ]);
    const expected = folded(interleaved.filter((e) => e !== poison));
    const states = changelogStates(p);
    expect([...states.keys()].sort()).toEqual(['a', 'b']);
    for (const [id, bytes] of states) expect(bytes).toEqual(serializeState(expected.get(id)!));
    // The plan's own outputs are the engine's without the record.
    const without = new Fleet(options);
    const expectedOutputs = interleaved
      .filter((e) => e !== poison)
      .flatMap((e) => without.process(e, DECIDED_AT).outputs);
    expect(p.delivered).toEqual(expectedOutputs);
  });

  it('answers a CompactionRequested it throws on: REFUSE, INVALID_REQUEST, HALT, with its requestId and seq', () => {
    const events = session('c').request('r-throws', 'TURNS', 0, 10, 10).events;
    const request = events.at(-1) as CompactionRequested;
    const committed = new SessionStates();
    const before = folded(events.slice(0, -1)).get('c')!;
    committed.set('c', before);
    const p = plan([request], context({ committed, step: throwingOn(request.eventId) }));

    expect(verdicts(p)).toEqual([
      expect.objectContaining({
        sessionId: 'c',
        requestId: 'r-throws',
        decision: 'REFUSE',
        action: 'HALT',
        rulesChecked: ['INVALID_REQUEST'],
        inputSeq: request.seq,
        requestedAt: request.occurredAt,
        spillRequestId: null,
      }),
    ]);
    expect(verdicts(p)[0]!.reasons[0]!.message).toContain('ENGINE_FAILED');
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'ENGINE_FAILED',
        message: expect.stringContaining('answered REFUSE, INVALID_REQUEST, HALT'),
      }),
    ]);
    // Not even the session's seq moved: the committed state is untouched and nothing is written.
    expect(changelogStates(p).size).toBe(0);
    expect(committed.peek('c')).toBe(before);
    expect(p.tally.byType.get('MalformedRequest')).toBe(1);
  });

  it('creates no state for a new session whose first record the engine throws on', () => {
    const events = new SessionBuilder('fresh', 1).open().turns(2).events;
    const p = plan(events, context({ step: throwingOn(events[0]!.eventId) }));
    expect(dlq(p).map((d) => d.code)).toEqual(['ENGINE_FAILED']);
    // The later turns find an unknown session (as after any dead letter: a gap), and are ignored.
    expect(changelogStates(p).get('fresh')).toEqual(
      serializeState(folded(events.slice(1)).get('fresh')!),
    );
  });
});

describe('an output encoder that throws', () => {
  it('dead-letters the record as OUTPUT_ENCODE_FAILED, state untouched; the refusal is answered when it encodes', () => {
    const events = session('d').request('r-spill', 'TURNS', 0, 10, 10).events;
    const failingSpill: OutputEncoder = {
      ...ENCODER,
      encodeSpillRequest: () => {
        throw new RangeError('spill encoder broke');
      },
    };
    const p = plan(events, context({ encoder: failingSpill }));
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'OUTPUT_ENCODE_FAILED',
        offset: String(events.length - 1),
        message: expect.stringContaining('RangeError: spill encoder broke'),
      }),
    ]);
    expect(verdicts(p).map((v) => [v.requestId, v.decision, v.action, v.rulesChecked])).toEqual([
      ['r-spill', 'REFUSE', 'HALT', ['INVALID_REQUEST']],
    ]);
    expect(p.sends.get('spills')).toBeUndefined();
    expect(changelogStates(p).get('d')).toEqual(
      serializeState(folded(events.slice(0, -1)).get('d')!),
    );
  });

  it('leaves a request unanswered when even the refusal cannot be encoded, and says so', () => {
    const events = session('e').request('r', 'TURNS', 0, 10, 10).events;
    const broken: OutputEncoder = {
      ...ENCODER,
      encodeVerdict: () => {
        throw new Error('verdict encoder broke');
      },
    };
    const p = plan(events, context({ encoder: broken }));
    expect(p.sends.get('verdicts')).toBeUndefined();
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'OUTPUT_ENCODE_FAILED',
        message: expect.not.stringContaining('answered'),
      }),
    ]);
  });
});

describe('an output larger than its topic takes', () => {
  it('dead-letters the record as OUTPUT_TOO_LARGE and creates no state (a 540 KB requestId on an unknown session)', () => {
    const request: CompactionRequested = {
      type: 'CompactionRequested',
      sessionId: 'huge-request',
      seq: 0,
      eventId: 'e0',
      occurredAt: 1,
      requestId: 'r'.repeat(540 * 1024),
      unit: 'TURNS',
      summaryInput: { start: 0, end: 1 },
      tailStart: 1,
      occupancyTokens: null,
    };
    const p = plan([request], context());
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'OUTPUT_TOO_LARGE',
        message: expect.stringMatching(
          /verdict would be \d+ bytes, more than topic verdicts takes/,
        ),
      }),
    ]);
    // The engine's verdict quotes the requestId twice (requestId, spillRequestId): ~1.1 MB. The
    // refusal quotes it once, and fits.
    expect(verdicts(p).map((v) => [v.requestId.length, v.action, v.rulesChecked])).toEqual([
      [540 * 1024, 'HALT', ['INVALID_REQUEST']],
    ]);
    expect(p.overlay.size).toBe(0);
    for (const [, messages] of p.sends)
      for (const m of messages)
        expect((m.value as Buffer | null)?.length ?? 0).toBeLessThan(1_048_576);
  });

  it('goes by the limit of each topic (limitOf)', () => {
    const events = session('f').request('r', 'TURNS', 0, 10, 10).events;
    const p = plan(events, context({ limitOf: (t) => (t === 'spills' ? 600 : 1_048_588) }));
    expect(dlq(p).map((d) => d.code)).toEqual(['OUTPUT_TOO_LARGE']);
    expect(verdicts(p).map((v) => v.rulesChecked)).toEqual([['INVALID_REQUEST']]);
  });
});

describe('a state that cannot be serialized', () => {
  it('is found by planning the batch again: the record that made it is STATE_NOT_SERIALIZABLE, the later ones go on', async () => {
    const g = session('g').turns(3).events;
    const at = g.findIndex((e) => e.type === 'TurnAppended' && e.turn === 12);
    // A turn far out (as turn 9007199254740990 once was for avsc's longs).
    g[at] = { ...(g[at] as ContextEvent & { type: 'TurnAppended' }), turn: 2 ** 52 + 10 };
    const events = [...g, ...session('h').turns(1).events];
    const serialize = (s: SessionState) => {
      if (s.headTurns > 2 ** 52) throw new RangeError('long out of range');
      return serializeState(s);
    };
    const records = events.map((e, i) => raw(e, i));
    const lessons = new PlanLessons();
    const p = await planBatch(
      BATCH,
      records,
      String(records.length),
      { ...context({ serialize }), lessons },
      // Decoded as given: the decoder's own bound (NUMBER_TOO_LARGE) would stop it earlier.
      (m) => ({ ok: true, input: events[Number(m.offset)]! }),
    );
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'STATE_NOT_SERIALIZABLE',
        offset: String(at),
        message: expect.stringContaining('RangeError: long out of range'),
      }),
    ]);
    expect([...lessons.careful]).toEqual(['g']);
    const expected = folded(events.filter((_, i) => i !== at));
    const states = changelogStates(p);
    expect(states.get('g')).toEqual(serializeState(expected.get('g')!));
    expect(states.get('h')).toEqual(serializeState(expected.get('h')!));
    expect(expected.get('g')!.lastTurn).toBe(14);
  });

  it('with the real serializer: a TurnAppended at turn 9007199254740990 (avsc cannot write its head) is dead-lettered', async () => {
    const g = session('real').turns(1).events;
    const last = g.at(-1) as ContextEvent & { type: 'TurnAppended' };
    const poison = { ...last, seq: last.seq + 1, eventId: 'far', turn: 9_007_199_254_740_990 };
    const events = [...g, poison, ...new SessionBuilder('other', 1).open().turns(1).events];
    const records = events.map((e, i) => raw(e, i));
    const p = await planBatch(
      BATCH,
      records,
      String(records.length),
      { ...context(), lessons: new PlanLessons() },
      // Decoded as given: the decoder's own bound (NUMBER_TOO_LARGE) would stop it earlier.
      (m) => ({ ok: true, input: events[Number(m.offset)]! }),
    );
    expect(dlq(p)).toEqual([
      expect.objectContaining({
        code: 'STATE_NOT_SERIALIZABLE',
        offset: String(g.length),
        message: expect.stringContaining('invalid "long"'),
      }),
    ]);
    expect(changelogStates(p).get('real')).toEqual(serializeState(folded(g).get('real')!));
    expect(changelogStates(p).has('other')).toBe(true);
  });

  it("over the changelog topic's limit is the same failure: the records that would make it so are dead-lettered", async () => {
    const events = session('big').events;
    const records = events.map((e, i) => raw(e, i));
    const limitOf = (t: string) => (t === 'changelog' ? 700 : 1_048_588);
    const planner = new BatchPlanner(BATCH, context({ limitOf }));
    events.forEach((e, i) => planner.add(records[i]!, { ok: true, input: e }));
    expect(() => planner.finish('99')).toThrow(/could not be serialized/);
    const p = await planBatch(
      BATCH,
      records,
      '99',
      { ...context({ limitOf }), lessons: new PlanLessons() },
      (m) => decodeForBatch(m, 'json', {} as RegistryCodec),
    );
    const codes = dlq(p).map((d) => d.code);
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set(['STATE_NOT_SERIALIZABLE']));
    expect(dlq(p)[0]!.message).toMatch(
      /more than the changelog topic takes \(max.message.bytes 700\)/,
    );
    for (const m of p.sends.get('changelog')!)
      expect((m.value as Buffer | null)?.length ?? 0).toBeLessThan(700);
  });
});

describe("a session's committed state that cannot be read", () => {
  it('dead-letters its records as STATE_UNREADABLE and answers its requests', () => {
    const committed = new SessionStates();
    committed.setSerialized('corrupt', Buffer.from([0x7f, 1, 2, 3]), 0);
    const events = new SessionBuilder('corrupt', 1)
      .skipSeq(20)
      .turns(1)
      .request('r', 'TURNS', 0, 1, 1).events;
    const p = plan(events, context({ committed }));
    expect(dlq(p).map((d) => d.code)).toEqual(['STATE_UNREADABLE', 'STATE_UNREADABLE']);
    expect(verdicts(p).map((v) => [v.requestId, v.rulesChecked])).toEqual([
      ['r', ['INVALID_REQUEST']],
    ]);
    expect(p.overlay.size).toBe(0);
  });
});

describe('dead letters', () => {
  it('cap the copied texts: a 600 KB key of a KEY_MISMATCH stays out of the headers', () => {
    const e = session('k').events[0]!;
    const m: RawRecord = {
      key: Buffer.from('x'.repeat(600 * 1024)),
      value: Buffer.from(JSON.stringify(e)),
      offset: '3',
    };
    const planner = new BatchPlanner(BATCH, context());
    planner.add(m, decodeForBatch(m, 'json', {} as RegistryCodec) as DecodedRecord);
    const p = planner.finish('4');
    const [letter] = p.sends.get('dlq')!;
    expect(letter!.headers!['cg.error.code']).toBe('KEY_MISMATCH');
    expect(Buffer.byteLength(String(letter!.headers!['cg.error.message']))).toBeLessThanOrEqual(
      1024,
    );
    expect((letter!.key as Buffer).equals(m.key!)).toBe(true);
    expect((letter!.value as Buffer).equals(m.value!)).toBe(true);
    expect(p.deadLetters[0]!.message.length).toBeLessThanOrEqual(1024);
  });
});
