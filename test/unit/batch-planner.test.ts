/**
 * A batch's plan without Kafka (src/kafka/batch/): decode → engine → outputs, dead letters
 * and changelog records. The plan publishes what folding the engine over the same events
 * publishes, writes one changelog record per touched session (its state after the batch), and
 * never changes the committed states it reads.
 */
import fc from 'fast-check';
import type { Message } from 'kafkajs';
import { Fleet, engineOptions } from '../../src/engine';
import type { ContextEvent } from '../../src/engine/events';
import { serializeState } from '../../src/engine/serialize';
import { decodeForBatch } from '../../src/kafka/batch/decoder';
import {
  PlanLessons,
  type TransactionBudget,
  type BatchPlan,
  type PlanConfig,
  type PlanContext,
} from '../../src/kafka/batch/plan';
import { planBatch as planInBudget } from '../../src/kafka/batch/planBatch';
import { BatchPlanner } from '../../src/kafka/batch/planner';
import { SessionCapacity } from '../../src/kafka/capacity/gate';
import {
  BARRIER_KEY,
  CLOSED_SINCE_HEADER,
  SEEN_AT_HEADER,
  decodePosition,
  positionKey,
  sessionOfKey,
  stateKey,
} from '../../src/kafka/changelogKeys';
import type { DecodedRecord, RawRecord } from '../../src/kafka/records';
import { SessionStates } from '../../src/kafka/sessionStates';
import { BeforeTransactionError } from '../../src/kafka/transport';
import { RegistryUnavailableError, type RegistryCodec } from '../../src/registry/codec';
import { auditRecordType, spillRequestType, verdictType } from '../../src/schema/schemas';
import { haltThenAcknowledgeExample, seedIncidentExample } from '../support/examples';
import { SessionBuilder } from '../support/sessionBuilder';
import { AVRO_BODIES, DECIDED_AT, PLAN_CONFIG } from '../support/planContext';

const CONFIG = PLAN_CONFIG;
const ENCODER = AVRO_BODIES;

const options = engineOptions();

const record = (e: ContextEvent, offset: number): RawRecord => ({
  key: Buffer.from(e.sessionId),
  value: Buffer.from(JSON.stringify(e)),
  offset: String(offset),
});

/** Every record decoded, in order, as the processor decodes them. */
async function decodeBatch(
  messages: readonly RawRecord[],
  format: PlanConfig['inputFormat'],
  codec: RegistryCodec,
): Promise<DecodedRecord[]> {
  const out: DecodedRecord[] = [];
  for (const m of messages) out.push(await decodeForBatch(m, format, codec));
  return out;
}

/** The records through a BatchPlanner, in order (decoded[i] is messages[i] decoded). */
function planBatch(
  batch: { topic: string; partition: number; messages: readonly RawRecord[] },
  decoded: readonly DecodedRecord[],
  ctx: PlanContext,
): BatchPlan {
  const planner = new BatchPlanner(batch, ctx);
  batch.messages.forEach((m, i) => planner.add(m, decoded[i]!));
  const last = batch.messages[batch.messages.length - 1]!;
  return planner.finish((BigInt(last.offset) + 1n).toString());
}

function context(committed: SessionStates): PlanContext {
  let t = 0;
  return {
    config: CONFIG,
    encoder: ENCODER,
    engine: options,
    committed,
    clock: () => DECIDED_AT,
    timer: () => (t += 0.5),
  };
}

/** Two sessions, the first half of each already committed, the rest in one batch. */
function fixture() {
  const a = seedIncidentExample();
  const b = haltThenAcknowledgeExample();
  const ha = Math.floor(a.length / 2);
  const hb = Math.floor(b.length / 2);
  const fleet = new Fleet(options);
  const committed = new SessionStates();
  for (const e of [...a.slice(0, ha), ...b.slice(0, hb)]) fleet.process(e, DECIDED_AT);
  for (const [id, s] of fleet.entries()) committed.set(id, s);
  // Interleaved, each session's order kept.
  const rest: ContextEvent[] = [];
  const ra = a.slice(ha);
  const rb = b.slice(hb);
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    if (i < ra.length) rest.push(ra[i]!);
    if (i < rb.length) rest.push(rb[i]!);
  }
  return { fleet, committed, rest, sessions: [a[0]!.sessionId, b[0]!.sessionId] };
}

const values = (sends: Map<string, Message[]>, topic: string) =>
  (sends.get(topic) ?? []).map((m) => m.value as Buffer);

describe('planBatch', () => {
  it('publishes what folding the engine publishes, with a dead letter in place, and one changelog record per session', async () => {
    const { fleet, committed, rest, sessions } = fixture();
    const before = sessions.map((id) => serializeState(committed.peek(id)!));
    const records = rest.map((e, i) => record(e, 100 + i));
    // A record whose key is not its sessionId: a dead letter, not an engine step.
    const misrouted = { ...record(rest[0]!, 99), key: Buffer.from('elsewhere') };
    records.splice(3, 0, misrouted);
    const decoded = await decodeBatch(records, 'json', {} as RegistryCodec);
    const plan = planBatch(
      { topic: 'in', partition: 4, messages: records },
      decoded,
      context(committed),
    );

    const expected = rest.flatMap((e) => fleet.process(e, DECIDED_AT).outputs);
    expect(expected.length).toBeGreaterThan(0);
    expect(plan.delivered).toEqual(expected);
    const ofKind = (k: string) => expected.filter((o) => o.record === k).map((o) => o.value);
    expect(values(plan.sends, 'verdicts').map((v) => verdictType.fromBuffer(v))).toEqual(
      ofKind('verdict'),
    );
    expect(values(plan.sends, 'spills').map((v) => spillRequestType.fromBuffer(v))).toEqual(
      ofKind('spill-request'),
    );
    expect(values(plan.sends, 'audits').map((v) => auditRecordType.fromBuffer(v))).toEqual(
      ofKind('audit'),
    );

    const dlq = plan.sends.get('dlq')!;
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.value).toEqual(misrouted.value);
    expect(dlq[0]!.headers).toMatchObject({
      'cg.error.code': 'KEY_MISMATCH',
      'cg.source.topic': 'in',
      'cg.source.partition': '4',
      'cg.source.offset': '99',
    });
    expect(plan.deadLetters).toEqual([
      { code: 'KEY_MISMATCH', offset: '99', message: expect.stringContaining('elsewhere') },
    ]);

    const changelog = plan.sends.get('changelog')!.slice(0, -1);
    const position = plan.sends.get('changelog')!.at(-1);
    expect(changelog.map((m) => m.key)).toEqual(sessions);
    for (const m of changelog) {
      expect(m.partition).toBe(4);
      expect(m.value).toEqual(serializeState(fleet.get(m.key as string)!));
    }
    // Last: the input position after the batch, in the same partition as the states.
    expect(position).toEqual({
      key: positionKey('in'),
      value: String(100 + rest.length),
      partition: 4,
    });
    expect(plan.steps).toBe(rest.length);
    expect(plan.engineMs).toBe(rest.length * 0.5);
    expect([...plan.tally.byType.values()].reduce((n, x) => n + x, 0)).toBe(rest.length);
    expect(plan.records).toBe([...plan.sends.values()].reduce((n, l) => n + l.length, 0));
    // The committed states are read, never changed: a failed transaction leaves them intact.
    expect(sessions.map((id) => serializeState(committed.peek(id)!))).toEqual(before);
  });

  it('writes a tombstone for a session the sweep frees, and none for an untouched one', async () => {
    const { committed, rest, sessions } = fixture();
    const first = rest.filter((e) => e.sessionId === sessions[0]).slice(0, 1);
    const records = first.map((e, i) => record(e, i));
    const decoded = await decodeBatch(records, 'json', {} as RegistryCodec);
    const plan = planBatch({ topic: 'in', partition: 1, messages: records }, decoded, {
      ...context(committed),
      sweep: (overlay) => overlay.set('closed-long-ago', null),
    });
    const changelog = plan.sends.get('changelog')!;
    expect(changelog.map((m) => [m.key, m.value === null])).toEqual([
      [sessions[0], false],
      ['closed-long-ago', true],
      [positionKey('in'), false],
    ]);
    expect(plan.overlay.get('closed-long-ago')).toBeNull();
  });
});

describe('processing-time stamps (docs/decisions.md 161)', () => {
  it("stamps each written session's changelog record with the plan's clock, whatever its events' times; a close keeps its first processing time", async () => {
    const yearAgo = DECIDED_AT - 365 * 86_400_000;
    // Events stamped a year before the processor's clock: opened, two turns, closed, one more turn.
    const events = new SessionBuilder('old', yearAgo).open().turns(2).close().turns(1).events;
    const id = 'old';
    const committed = new SessionStates();
    const batch = async (at: number, es: ContextEvent[], from: number) => {
      const r = es.map((e, i) => record(e, from + i));
      const d = await decodeBatch(r, 'json', {} as RegistryCodec);
      const plan = planBatch({ topic: 'in', partition: 0, messages: r }, d, {
        ...context(committed),
        clock: () => at,
      });
      const written = plan.sends.get('changelog')!.find((m) => m.key === stateKey(id))!;
      committed.set(id, plan.overlay.get(id)!, plan.stamps.get(id));
      return { plan, headers: written.headers };
    };
    const opened = await batch(DECIDED_AT, events.slice(0, 3), 0);
    expect(opened.plan.overlay.get(id)!.closedAt).toBeNull();
    expect(opened.headers).toEqual({ [SEEN_AT_HEADER]: String(DECIDED_AT) });
    // Closed a minute later by the processor's clock (a year ago by the event's).
    const closed = await batch(DECIDED_AT + 60_000, events.slice(3, 4), 3);
    expect(closed.plan.overlay.get(id)!.closedAt).toBe(events[3]!.occurredAt);
    expect(closed.headers).toEqual({
      [SEEN_AT_HEADER]: String(DECIDED_AT + 60_000),
      [CLOSED_SINCE_HEADER]: String(DECIDED_AT + 60_000),
    });
    // Reached again after the close: seen later, closed since the close's processing.
    const again = await batch(DECIDED_AT + 120_000, events.slice(4), 4);
    expect(again.plan.stamps.get(id)).toEqual({
      seenAt: DECIDED_AT + 120_000,
      closedSince: DECIDED_AT + 60_000,
    });
    expect(again.headers).toEqual({
      [SEEN_AT_HEADER]: String(DECIDED_AT + 120_000),
      [CLOSED_SINCE_HEADER]: String(DECIDED_AT + 60_000),
    });
  });
});

describe('the transaction budget (docs/decisions.md 162)', () => {
  /** The batch in transactions of at most `budget`, each committed before the next is planned. */
  async function inTransactions(budget: TransactionBudget) {
    const { committed, rest } = fixture();
    const records = rest.map((e, i) => record(e, 100 + i));
    const end = String(100 + records.length + 5); // the fetched batch ends past its last record
    const plans: BatchPlan[] = [];
    let left: readonly RawRecord[] = records;
    while (left.length > 0) {
      let t = 0;
      const p = await planInBudget(
        { topic: 'in', partition: 0 },
        left,
        end,
        {
          ...context(committed),
          timer: () => (t += 1),
          lessons: new PlanLessons(),
          budget,
        },
        (m) => decodeForBatch(m, 'json', {} as RegistryCodec),
      );
      for (const [id, st] of p.overlay) committed.set(id, st!, p.stamps.get(id));
      plans.push(p);
      left = left.slice(p.taken);
    }
    return { plans, records, end };
  }
  const outputsOf = (plans: BatchPlan[]) =>
    ['verdicts', 'spills', 'audits', 'dlq'].map((t) => plans.flatMap((p) => values(p.sends, t)));

  it('splits a batch into transactions of at most the byte budget (at least one record each), each ending at the offset after its last record, with the outputs of one transaction', async () => {
    const whole = await inTransactions({ ms: 1e9, bytes: 1e12 });
    expect(whole.plans).toHaveLength(1);
    expect(whole.plans[0]!.nextOffset).toBe(whole.end);
    const split = await inTransactions({ ms: 1e9, bytes: 1 });
    expect(split.plans).toHaveLength(split.records.length); // 1 byte: one record each
    split.plans.forEach((p, i) => {
      expect(p.taken).toBe(1);
      const last = i === split.plans.length - 1;
      expect(p.nextOffset).toBe(last ? split.end : String(100 + i + 1));
      expect(decodePosition(p.sends.get('changelog')!.at(-1)!.value as Buffer)).toBe(p.nextOffset);
    });
    expect(outputsOf(split.plans)).toEqual(outputsOf(whole.plans));
    const some = await inTransactions({ ms: 1e9, bytes: 4_096 });
    expect(some.plans.length).toBeGreaterThan(1);
    expect(some.plans.length).toBeLessThan(some.records.length);
    expect(outputsOf(some.plans)).toEqual(outputsOf(whole.plans));
  });

  it('stops a transaction once its planning time reaches the time budget: a shorter budget, more transactions', async () => {
    // The test's timer advances 1 ms per reading (the engine's timing reads it too).
    const short = await inTransactions({ ms: 3, bytes: 1e12 });
    const longer = await inTransactions({ ms: 30, bytes: 1e12 });
    expect(longer.plans.length).toBeGreaterThan(1);
    expect(short.plans.length).toBeGreaterThan(longer.plans.length);
    for (const { plans, records } of [short, longer]) {
      expect(plans.reduce((n, p) => n + p.taken, 0)).toBe(records.length);
      expect(outputsOf(plans)).toEqual(outputsOf(short.plans));
    }
  });
});

describe('changelog keys', () => {
  it('a session whose id starts with a NUL keeps its own key, apart from every control key', async () => {
    const [open] = seedIncidentExample();
    const odd = { ...open!, sessionId: '\u0000restore-barrier' } as ContextEvent;
    const records = [record(odd, 7)];
    const decoded = await decodeBatch(records, 'json', {} as RegistryCodec);
    const plan = planBatch(
      { topic: 'in', partition: 0, messages: records },
      decoded,
      context(new SessionStates()),
    );
    const keys = plan.sends.get('changelog')!.map((m) => m.key as string);
    expect(keys).toEqual(['\u0000\u0000restore-barrier', positionKey('in')]);
    expect(keys.map(sessionOfKey)).toEqual(['\u0000restore-barrier', null]);
    expect(sessionOfKey(BARRIER_KEY)).toBeNull();
  });

  it('maps every sessionId to a key and back, and never onto a control key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), (sessionId, topic) => {
        const key = stateKey(sessionId);
        expect(sessionOfKey(key)).toBe(sessionId);
        expect(key).not.toBe(positionKey(topic));
        expect(key).not.toBe(BARRIER_KEY);
      }),
    );
  });

  it('a position record decodes only as a decimal offset', () => {
    expect(decodePosition(Buffer.from('0'))).toBe('0');
    expect(decodePosition(Buffer.from('9223372036854775807'))).toBe('9223372036854775807');
    for (const bad of ['', '-1', '01', '1.5', ' 7', 'x', '12345678901234567890'])
      expect(decodePosition(Buffer.from(bad))).toBeNull();
    expect(decodePosition(null)).toBeNull();
  });
});

describe('planBatch before its transaction', () => {
  it('a registry that cannot be reached fails the batch before its transaction, the places it took under the cap given back', async () => {
    const e = seedIncidentExample()[0]!;
    const avro: RawRecord = {
      key: Buffer.from(e.sessionId),
      value: Buffer.from([0, 0, 0, 0, 7, 1]),
      offset: '5',
    };
    const down = new RegistryUnavailableError('registry down');
    const codec = { decodeEvent: () => Promise.reject(down) } as unknown as RegistryCodec;
    const capacity = new SessionCapacity(10, () => 0);
    const failure = await planInBudget(
      { topic: 'in', partition: 0 },
      [record(e, 4), avro],
      '6',
      { ...context(new SessionStates()), capacity, lessons: new PlanLessons() },
      (m) => decodeForBatch(m, 'auto', codec),
    ).catch((x: unknown) => x);
    expect(failure).toBeInstanceOf(BeforeTransactionError);
    expect((failure as BeforeTransactionError).cause).toBe(down);
    expect(capacity.reserved).toBe(0);
  });
});
