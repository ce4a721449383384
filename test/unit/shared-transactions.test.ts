/**
 * One process-wide transactional producer behind per-partition facades
 * (src/kafka/sharedTransactions.ts), over a fake of the transport's TransactionalProducer that
 * records what each shared transaction sent and committed, and fails a chosen step of a chosen
 * transaction. What a committed facade transaction wrote is in exactly one committed shared
 * transaction, in its own order; a failed shared transaction fails every facade in it and
 * commits nothing; no round sends a topic-partition twice; a fenced producer is replaced
 * before the next transaction; commits that arrive together share transactions; and
 * commitBatch and writeBarrier run over a facade as over a producer of their own.
 */
import fc from 'fast-check';
import { SharedTransactions, sendRounds } from '../../src/kafka/sharedTransactions';
import { commitBatch } from '../../src/kafka/transaction';
import { writeBarrier } from '../../src/kafka/restore';
import {
  ProducerFencedError,
  TransactionOutcomeUnknownError,
  type GroupMetadata,
  type NextOffset,
  type ProducerTransaction,
  type TopicRecords,
  type TransactionalProducer,
} from '../../src/kafka/transport';

type Step = 'begin' | 'send' | 'offsets' | 'commit';

/** A failure to inject: at `step` of the shared transaction numbered `txn` (from 0). */
interface Failure {
  txn: number;
  step: Step;
  fencing: boolean;
}

/** What one shared transaction sent: its rounds (each record's value) and its offsets. */
interface SharedTxn {
  producer: number;
  rounds: { topic: string; partition: number | undefined; value: string }[][];
  offsets: (NextOffset & { generationId: number | null })[];
}

/** The broker's side: the transactions committed and failed, the producers made. */
class FakeKafka {
  readonly committed: SharedTxn[] = [];
  readonly failed: SharedTxn[] = [];
  readonly producers: FakeProducer[] = [];
  /** What the shared producer must never do (a round with a partition twice, a fenced producer used). */
  readonly violations: string[] = [];
  readonly injected: unknown[] = [];
  begun = 0;
  /** A commit that never ends (the deadline's case). */
  hangCommit = false;

  constructor(private readonly failures: readonly Failure[] = []) {}

  newProducer = (): TransactionalProducer => {
    const p = new FakeProducer(this, this.producers.length);
    this.producers.push(p);
    return p;
  };

  /** Throws the failure planned for `step` of transaction `txn`, if any. */
  step(txn: number, step: Step, producer: FakeProducer): void {
    const f = this.failures.find((x) => x.txn === txn && x.step === step);
    if (f === undefined) return;
    const cause = new Error(`injected ${step} failure of transaction ${txn}`);
    const e = f.fencing ? new ProducerFencedError('PRODUCER_FENCED', cause) : cause;
    if (f.fencing) producer.fenced = true;
    // A send, offsets or commit that failed leaves the producer's sequence numbers ahead of
    // what the broker wrote (the library's: OUT_OF_ORDER_SEQUENCE_NUMBER on its next
    // transaction), so it must not begin another.
    if (step !== 'begin') producer.spent = true;
    this.injected.push(e);
    throw e;
  }
}

class FakeProducer implements TransactionalProducer {
  connected = false;
  fenced = false;
  spent = false;

  constructor(
    private readonly kafka: FakeKafka,
    readonly id: number,
  ) {}

  async connect(): Promise<void> {
    this.connected = true;
  }

  async disconnect(): Promise<void> {
    this.connected = false;
  }

  async transaction(): Promise<ProducerTransaction> {
    const kafka = this.kafka;
    if (this.fenced) kafka.violations.push(`fenced producer ${this.id} began a transaction`);
    if (this.spent)
      kafka.violations.push(`producer ${this.id} began a transaction after one of its failed`);
    if (!this.connected) kafka.violations.push(`producer ${this.id} began before connecting`);
    const n = kafka.begun++;
    kafka.step(n, 'begin', this);
    const txn: SharedTxn = { producer: this.id, rounds: [], offsets: [] };
    let ended = false;
    const end = (to: SharedTxn[]) => {
      if (!ended) to.push(txn);
      ended = true;
    };
    return {
      send: async (request) => {
        kafka.step(n, 'send', this);
        const round = request.flatMap(({ topic, messages }) =>
          messages.map((m) => ({ topic, partition: m.partition, value: String(m.value) })),
        );
        const owners = new Map<string, string>();
        for (const r of round) {
          const key = `${r.topic}/${r.partition}`;
          const request = r.value.split(':').slice(0, 2).join(':'); // participant:request
          if ((owners.get(key) ?? request) !== request)
            kafka.violations.push(`round sends ${key} for ${owners.get(key)} and ${request}`);
          owners.set(key, request);
        }
        txn.rounds.push(round);
      },
      sendOffsets: async (offsets, group) => {
        kafka.step(n, 'offsets', this);
        for (const o of offsets) txn.offsets.push({ ...o, generationId: group.generationId });
      },
      commit: async () => {
        if (kafka.hangCommit) await new Promise(() => undefined);
        kafka.step(n, 'commit', this);
        end(kafka.committed);
      },
      abort: async () => end(kafka.failed),
    };
  }
}

/** A facade transaction to run: its partition, its requests, and whether it aborts instead. */
interface Plan {
  partition: number;
  requests: { topic: string; partition: number; count: number }[][];
  abort: boolean;
  wave: number;
}

const GROUP = (generationId: number): GroupMetadata => ({
  groupId: 'g',
  generationId,
  memberId: 'm',
});

/** Plan `i`'s requests, each record's value `i:request:record`. */
function requestsOf(i: number, plan: Plan): TopicRecords[][] {
  let n = 0;
  return plan.requests.map((request, r) =>
    request.map(({ topic, partition, count }) => ({
      topic,
      messages: Array.from({ length: count }, () => ({ value: `${i}:${r}:${n++}`, partition })),
    })),
  );
}

type Outcome = { kind: 'committed' } | { kind: 'failed'; error: unknown } | { kind: 'aborted' };

/** Runs plan `i` on a facade: its sends, its offset (next offset = i + 1), commit or abort. */
async function run(shared: SharedTransactions, i: number, plan: Plan): Promise<Outcome> {
  const facade = shared.forPartition(plan.partition);
  await facade.connect();
  const txn = await facade.transaction();
  for (const request of requestsOf(i, plan)) await txn.send(request);
  await txn.sendOffsets(
    [{ topic: 'in', partition: plan.partition, offset: String(i + 1) }],
    GROUP(i),
  );
  if (plan.abort) {
    await txn.abort();
    return { kind: 'aborted' };
  }
  return txn.commit().then(
    (): Outcome => ({ kind: 'committed' }),
    (error: unknown): Outcome => ({ kind: 'failed', error }),
  );
}

/** Runs the plans wave by wave, those of one wave at once. */
async function runAll(shared: SharedTransactions, plans: readonly Plan[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const waves = [...new Set(plans.map((p) => p.wave))].sort();
  for (const w of waves) {
    const ids = plans.map((p, i) => (p.wave === w ? i : -1)).filter((i) => i >= 0);
    const got = await Promise.all(ids.map((i) => run(shared, i, plans[i]!)));
    ids.forEach((id, k) => (outcomes[id] = got[k]!));
  }
  return outcomes;
}

const recordsOfPlan = (txn: SharedTxn, i: number) =>
  txn.rounds
    .flat()
    .filter((r) => r.value.startsWith(`${i}:`))
    .map((r) => r.value);

const planArb: fc.Arbitrary<Plan> = fc.record({
  partition: fc.nat(5),
  requests: fc.array(
    fc.array(
      fc.record({
        topic: fc.constantFrom('out', 'changelog'),
        partition: fc.nat(2),
        count: fc.integer({ min: 1, max: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    { minLength: 1, maxLength: 3 },
  ),
  abort: fc.boolean(),
  wave: fc.nat(2),
});

const failureArb: fc.Arbitrary<Failure> = fc.record({
  txn: fc.nat(6),
  step: fc.constantFrom<Step>('begin', 'send', 'offsets', 'commit'),
  fencing: fc.boolean(),
});

describe('shared transactions (properties)', () => {
  it('every committed facade transaction is in exactly one committed shared transaction, in its own order, and a failed one in none', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(planArb, { minLength: 1, maxLength: 10 }),
        fc.array(failureArb, { maxLength: 4 }),
        fc.integer({ min: 1, max: 4 }),
        async (plans, failures, maxParticipants) => {
          const kafka = new FakeKafka(failures);
          const shared = new SharedTransactions(kafka.newProducer, { maxParticipants });
          const outcomes = await runAll(shared, plans);
          expect(kafka.violations).toEqual([]);
          plans.forEach((plan, i) => {
            const own = requestsOf(i, plan).flatMap((r) =>
              r.flatMap((t) => t.messages.map((m) => m.value)),
            );
            const holding = kafka.committed.filter((t) => recordsOfPlan(t, i).length > 0);
            const offsets = kafka.committed.flatMap((t) =>
              t.offsets.filter((o) => o.offset === String(i + 1)),
            );
            const outcome = outcomes[i]!;
            if (outcome.kind === 'committed') {
              expect(holding).toHaveLength(1);
              expect(recordsOfPlan(holding[0]!, i)).toEqual(own);
              expect(holding[0]!.offsets.filter((o) => o.offset === String(i + 1))).toEqual([
                { topic: 'in', partition: plan.partition, offset: String(i + 1), generationId: i },
              ]);
            } else {
              expect(holding).toEqual([]);
              expect(offsets).toEqual([]);
            }
            // A failed one fails with the error the producer raised, its class kept.
            if (outcome.kind === 'failed') expect(kafka.injected).toContain(outcome.error);
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a failed shared transaction fails every facade transaction in it, and its producer (or a fenced one) is replaced before the next', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          planArb.map((p) => ({ ...p, abort: false })),
          { minLength: 1, maxLength: 8 },
        ),
        fc.array(failureArb, { minLength: 1, maxLength: 4 }),
        async (plans, failures) => {
          const kafka = new FakeKafka(failures);
          const shared = new SharedTransactions(kafka.newProducer);
          const outcomes = await runAll(shared, plans);
          for (const txn of kafka.failed)
            plans.forEach((_, i) => {
              if (recordsOfPlan(txn, i).length > 0) expect(outcomes[i]!.kind).toBe('failed');
            });
          // No fenced producer, nor one whose transaction failed after it began, began again
          // (violations); a new one only after such a failure.
          expect(kafka.violations).toEqual([]);
          const spent = kafka.producers.filter((p) => p.fenced || p.spent).length;
          const lastSpent = kafka.producers.at(-1)!.fenced || kafka.producers.at(-1)!.spent;
          expect(kafka.producers.length - 1).toBe(spent - (lastSpent ? 1 : 0));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("sendRounds never puts one topic-partition of two requests in a round, and keeps each facade's requests in order", () => {
    fc.assert(
      fc.property(fc.array(planArb, { minLength: 1, maxLength: 8 }), (plans) => {
        const recorded = plans.map((p, i) => requestsOf(i, p));
        const rounds = sendRounds(recorded);
        const roundOf = new Map<string, number>();
        rounds.forEach((round, k) => {
          const owner = new Map<string, string>();
          for (const { topic, messages } of round)
            for (const m of messages) {
              const [i, r] = String(m.value).split(':');
              const key = `${topic}/${m.partition}`;
              expect(owner.get(key) ?? `${i}:${r}`).toBe(`${i}:${r}`);
              owner.set(key, `${i}:${r}`);
              roundOf.set(`${i}:${r}`, k);
            }
        });
        recorded.forEach((requests, i) => {
          const order = requests.map((_, r) => roundOf.get(`${i}:${r}`)!);
          expect(order).toEqual([...order].sort((a, b) => a - b));
          expect(new Set(order).size).toBe(order.length);
        });
        // Nothing lost or added.
        const all = (rs: TopicRecords[][]) =>
          rs.flatMap((r) => r.flatMap((t) => t.messages.map((m) => m.value))).sort();
        expect(all(rounds)).toEqual(all(recorded.flat()));
      }),
    );
  });
});

describe('shared transactions', () => {
  it('a facade transaction aborted before its commit sends nothing', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const plan: Plan = {
      partition: 0,
      requests: [[{ topic: 'out', partition: 0, count: 2 }]],
      abort: true,
      wave: 0,
    };
    expect(await run(shared, 0, plan)).toEqual({ kind: 'aborted' });
    expect(kafka.begun).toBe(0);
    expect(kafka.committed).toEqual([]);
  });

  it('many facades committing at once share fewer transactions than commits', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const plans: Plan[] = Array.from({ length: 12 }, (_, p) => ({
      partition: p,
      requests: [[{ topic: 'out', partition: p % 3, count: 1 }]],
      abort: false,
      wave: 0,
    }));
    const outcomes = await runAll(shared, plans);
    expect(outcomes.every((o) => o.kind === 'committed')).toBe(true);
    expect(kafka.committed.length).toBeLessThan(plans.length);
    expect(kafka.committed.length).toBeGreaterThanOrEqual(1);
    // One producer for the process, connected once.
    expect(kafka.producers).toHaveLength(1);
  });

  it('starts a shared transaction at once when none is in flight (no linger)', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const facade = shared.forPartition(0);
    await facade.connect();
    const txn = await facade.transaction();
    await txn.send([{ topic: 'out', messages: [{ value: '0:0:0', partition: 0 }] }]);
    await txn.commit();
    expect(kafka.committed).toHaveLength(1);
  });

  it('gives up a shared transaction past its deadline and uses a new producer for the next', async () => {
    const kafka = new FakeKafka();
    kafka.hangCommit = true;
    const shared = new SharedTransactions(kafka.newProducer, { deadlineMs: 20 });
    const plan: Plan = {
      partition: 0,
      requests: [[{ topic: 'out', partition: 0, count: 1 }]],
      abort: false,
      wave: 0,
    };
    const first = await run(shared, 0, plan);
    expect(first.kind === 'failed' && first.error).toBeInstanceOf(TransactionOutcomeUnknownError);
    kafka.hangCommit = false;
    expect(await run(shared, 1, plan)).toEqual({ kind: 'committed' });
    expect(kafka.producers).toHaveLength(2);
    expect(kafka.committed.map((t) => t.producer)).toEqual([1]);
  });

  it('a disconnected facade is detached: the shared producer stays, its own later transactions fail', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const a = shared.forPartition(0);
    const b = shared.forPartition(1);
    await Promise.all([a.connect(), b.connect()]);
    await a.disconnect();
    await expect(a.transaction()).rejects.toThrow(/disconnected/);
    expect(kafka.producers.map((p) => p.connected)).toEqual([true]);
    await shared.close();
    expect(kafka.producers.map((p) => p.connected)).toEqual([false]);
  });

  it('commitBatch runs unchanged over a facade: records and offset committed together', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const facade = shared.forPartition(4);
    await facade.connect();
    await commitBatch(facade, {
      sends: new Map([['out', [{ key: 'k', value: '4:0:0' }]]]),
      group: GROUP(7),
      topic: 'in',
      partition: 4,
      nextOffset: '42',
      partitionCounts: new Map([['out', 3]]),
    });
    expect(kafka.committed).toHaveLength(1);
    expect(kafka.committed[0]!.rounds.flat().map((r) => r.value)).toEqual(['4:0:0']);
    expect(kafka.committed[0]!.offsets).toEqual([
      { topic: 'in', partition: 4, offset: '42', generationId: 7 },
    ]);
  });

  it('commitBatch over a facade keeps the class of a fencing, and its abort after the failed commit succeeds', async () => {
    const kafka = new FakeKafka([{ txn: 0, step: 'offsets', fencing: true }]);
    const shared = new SharedTransactions(kafka.newProducer);
    const facade = shared.forPartition(0);
    await facade.connect();
    let aborted = 0;
    const commit = commitBatch(
      facade,
      {
        sends: new Map([['out', [{ key: 'k', value: '0:0:0' }]]]),
        group: GROUP(1),
        topic: 'in',
        partition: 0,
        nextOffset: '1',
        partitionCounts: new Map([['out', 1]]),
      },
      () => aborted++,
    );
    await expect(commit).rejects.toBeInstanceOf(ProducerFencedError);
    expect(aborted).toBe(1);
    expect(kafka.committed).toEqual([]);
  });

  it('writeBarrier runs unchanged over a facade: the nonce committed to its partition', async () => {
    const kafka = new FakeKafka();
    const shared = new SharedTransactions(kafka.newProducer);
    const facade = shared.forPartition(2);
    await facade.connect();
    const nonce = await writeBarrier(facade, 'changelog', 2);
    expect(kafka.committed).toHaveLength(1);
    expect(kafka.committed[0]!.rounds).toEqual([
      [{ topic: 'changelog', partition: 2, value: nonce }],
    ]);
    expect(kafka.committed[0]!.offsets).toEqual([]);
  });
});
