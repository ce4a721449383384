/**
 * A partition's task (src/kafka/partition.ts) over a fake transactional producer and an
 * in-memory changelog, without Kafka: what each outcome of a batch leaves behind. A batch
 * commits its outputs, changelog records and consumer offset in one transaction; a failure
 * before the transaction began is read again from the batch's start after the task's pause; a
 * send that fails inside it aborts it and the task resynchronises; a fenced producer ends the
 * batch as fenced with nothing committed; a resync restores the committed state and input
 * position from the changelog. The real broker's side of the same cases is in
 * test/integration/processor.test.ts and faults.test.ts.
 */
import { KafkaJSProtocolError } from 'kafkajs';
import pino from 'pino';
import { DEFAULTS, type Config } from '../../src/config/config';
import { Fleet, engineOptions } from '../../src/engine';
import type { ContextEvent } from '../../src/engine/events';
import { serializeState } from '../../src/engine/serialize';
import { positionKey, sessionOfKey } from '../../src/kafka/changelogKeys';
import { restoreGroup } from '../../src/kafka/groupRestore';
import { typedFailure } from '../../src/kafka/kafkajs/transactionalProducer';
import { PartitionTask, type TaskHost } from '../../src/kafka/partition';
import type { ProcessorObserver } from '../../src/kafka/processorObserver';
import { RecordLimits } from '../../src/kafka/recordLimits';
import { SessionStates } from '../../src/kafka/sessionStates';
import {
  RestoreBehindCommittedError,
  applyChangelogRecord,
  behindCommitted,
  type RestoreTarget,
} from '../../src/kafka/restore';
import type {
  FetchedBatch,
  OutRecord,
  ProducerTransaction,
  TopicRecords,
  TransactionalProducer,
} from '../../src/kafka/transport';
import type { RegistryCodec } from '../../src/registry/codec';
import { verdictType } from '../../src/schema/schemas';
import { haltThenAcknowledgeExample, seedIncidentExample } from '../support/examples';
import { AVRO_BODIES, DECIDED_AT } from '../support/planContext';

const CONFIG: Config = { ...DEFAULTS, inputFormat: 'json' };
const GROUP = { groupId: CONFIG.groupId, generationId: null, memberId: null };
const OUTPUT_TOPICS = [
  CONFIG.verdictTopic,
  CONFIG.spillTopic,
  CONFIG.auditTopic,
  CONFIG.dlqTopic,
  CONFIG.changelogTopic,
];

/** Where a fake transaction can be made to fail. */
type Step = 'begin' | 'send' | 'offsets' | 'commit';

/** What one committed transaction made visible. */
interface Committed {
  records: { topic: string; message: OutRecord }[];
  /** The consumer offset it committed (the next record to read), if any. */
  offset: string | null;
}

/** The broker's side: committed transactions, aborts, the producers made, failures to inject. */
class FakeCluster {
  readonly committed: Committed[] = [];
  readonly producers: FakeProducer[] = [];
  aborted = 0;
  private readonly failures: { step: Step; error: unknown }[] = [];

  /** The next call of `step` (of any producer) throws `error`. */
  failNext(step: Step, error: unknown): void {
    this.failures.push({ step, error });
  }

  /**
   * Throws the first failure queued for `step`, if any, typed as the kafkajs transport types
   * a kafkajs failure (src/kafka/kafkajs/transactionalProducer.ts).
   */
  step(step: Step): void {
    const i = this.failures.findIndex((f) => f.step === step);
    if (i < 0) return;
    const [f] = this.failures.splice(i, 1);
    throw typedFailure(f!.error);
  }

  /** Every committed record of `topic`, in commit order. */
  records(topic: string): OutRecord[] {
    return this.committed.flatMap((c) =>
      c.records.filter((r) => r.topic === topic).map((r) => r.message),
    );
  }

  /** Committed transactions that committed a consumer offset (batches, not barriers). */
  batches(): Committed[] {
    return this.committed.filter((c) => c.offset !== null);
  }

  newProducer = (): TransactionalProducer => {
    const p = new FakeProducer(this);
    this.producers.push(p);
    return p;
  };

  /** Reads of the changelog that miss the last committed batch (a replica that hides it). */
  hideLastBatch = 0;

  /** As restorePartitions: each target's changelog records up to its barrier. */
  readChangelog = async (targets: RestoreTarget[]): Promise<void> => {
    const hidden = this.hideLastBatch > 0 ? this.batches().at(-1) : undefined;
    if (hidden !== undefined) this.hideLastBatch--;
    const records = this.committed
      .filter((c) => c !== hidden)
      .flatMap((c) =>
        c.records.filter((r) => r.topic === CONFIG.changelogTopic).map((r) => r.message),
      );
    for (const t of targets) {
      t.position = null;
      for (const m of records)
        if (applyChangelogRecord(t, m as never, positionKey(CONFIG.inputTopic), DECIDED_AT)) break;
    }
  };

  /** The partitions each restore asked the group's committed offsets of. */
  committedAsked: number[][] = [];

  /** The group's committed offset: the last batch's (partition 0 only). */
  committedOffsets = async (
    partitions: readonly number[],
  ): Promise<ReadonlyMap<number, string>> => {
    this.committedAsked.push([...partitions]);
    const last = this.batches().at(-1)?.offset;
    return new Map(last === undefined || last === null ? [] : [[0, last]]);
  };
}

class FakeProducer implements TransactionalProducer {
  connected = false;
  transactions = 0;

  constructor(private readonly cluster: FakeCluster) {}

  async connect(): Promise<void> {
    this.connected = true;
  }

  async disconnect(): Promise<void> {
    this.connected = false;
  }

  async transaction(): Promise<ProducerTransaction> {
    const cluster = this.cluster;
    cluster.step('begin');
    this.transactions++;
    const pending: Committed = { records: [], offset: null };
    return {
      send: async (request: readonly TopicRecords[]) => {
        cluster.step('send');
        for (const { topic, messages } of request)
          for (const message of messages) pending.records.push({ topic, message });
      },
      sendOffsets: async (offsets) => {
        cluster.step('offsets');
        pending.offset = offsets[0]!.offset;
      },
      commit: async () => {
        cluster.step('commit');
        cluster.committed.push(pending);
      },
      abort: async () => {
        cluster.aborted++;
      },
    };
  }
}

/** What the host saw: consumer seeks, the observer's transactions and resyncs. */
interface Seen {
  seeks: string[];
  transactions: string[];
  resyncs: number;
}

function hostOf(cluster: FakeCluster): { host: TaskHost; seen: Seen } {
  const seen: Seen = { seeks: [], transactions: [], resyncs: 0 };
  const observer: ProcessorObserver = {
    transaction: (outcome) => void seen.transactions.push(outcome),
    resync: () => void seen.resyncs++,
  };
  const host: TaskHost = {
    config: CONFIG,
    codec: AVRO_BODIES as unknown as RegistryCodec,
    log: pino({ level: 'silent' }),
    observer,
    clock: () => DECIDED_AT,
    engine: () => engineOptions(),
    limits: new RecordLimits(),
    partitionCounts: new Map([CONFIG.inputTopic, ...OUTPUT_TOPICS].map((t) => [t, 1])),
    capacity: null,
    stopping: () => false,
    seekInput: (_partition, offset) => void seen.seeks.push(offset),
    committedOffset: async () => '0',
    readinessChanged: () => undefined,
    newProducer: cluster.newProducer,
    readChangelog: cluster.readChangelog,
    committedOffsets: cluster.committedOffsets,
    retryPauseMs: 1,
  };
  return { host, seen };
}

/** A fetched batch of partition 0 of the input topic: `events` as JSON from `first` on. */
function batchOf(events: readonly ContextEvent[], first: number): FetchedBatch {
  const messages = events.map((e, i) => ({
    key: Buffer.from(e.sessionId),
    value: Buffer.from(JSON.stringify(e)),
    offset: String(first + i),
    timestamp: String(DECIDED_AT),
    attributes: 0,
    headers: {},
    size: 0,
  }));
  return {
    topic: CONFIG.inputTopic,
    partition: 0,
    highWatermark: String(first + events.length),
    messages,
    firstOffset: () => messages[0]!.offset,
    lastOffset: () => messages[messages.length - 1]!.offset,
  };
}

/** A new task, restored from the (fake) changelog and running. */
async function runningTask(cluster = new FakeCluster()) {
  const { host, seen } = hostOf(cluster);
  const task = new PartitionTask(0, host);
  restoreGroup([task], host);
  await task.whenSettled();
  expect(task.phase).toBe('running');
  return { task, cluster, seen };
}

/** The committed verdicts, decoded. */
const verdicts = (cluster: FakeCluster) =>
  cluster.records(CONFIG.verdictTopic).map((m) => verdictType.fromBuffer(m.value as Buffer));

/** What folding the engine over `events` publishes (verdicts; outputs of a kind), and its states. */
function expected(events: readonly ContextEvent[]) {
  const fleet = new Fleet(engineOptions());
  const outputs = events.flatMap((e) => fleet.process(e, DECIDED_AT).outputs);
  const states = new Map([...fleet.entries()].map(([id, s]) => [id, serializeState(s)]));
  return {
    verdicts: outputs.filter((o) => o.record === 'verdict').map((o) => o.value),
    outputs: (kind: string) => outputs.filter((o) => o.record === kind).length,
    states,
  };
}

/** The task's committed states, serialized. */
const statesOf = (task: PartitionTask) =>
  new Map(
    [...task.sessions.sessionIds()].map((id) => [id, serializeState(task.sessions.peek(id)!)]),
  );

/** A protocol error as kafkajs builds it from a broker's error code. */
const protocolError = (type: string, code: number, retriable: boolean) =>
  new KafkaJSProtocolError({ type, code, retriable, message: `${type} from the broker` } as never);

const EVENTS = seedIncidentExample();

/**
 * The batch's one transaction was aborted, and the task resynchronised once: running again,
 * with a second producer in place of the first.
 */
async function abortedThenResynced(task: PartitionTask, cluster: FakeCluster, seen: Seen) {
  expect(cluster.aborted).toBe(1);
  expect(seen.transactions).toEqual(['aborted']);
  expect(seen.resyncs).toBe(1);
  await task.whenSettled();
  expect(task.phase).toBe('running');
  expect(cluster.producers).toHaveLength(2);
}

describe('a partition task', () => {
  it('commits a batch’s outputs, changelog records and consumer offset in one transaction', async () => {
    const { task, cluster, seen } = await runningTask();
    const want = expected(EVENTS);
    expect(want.verdicts.length).toBeGreaterThan(0);

    const outcome = await task.process(batchOf(EVENTS, 0), GROUP);

    expect(outcome).toEqual({ kind: 'committed', lastOffset: String(EVENTS.length - 1) });
    const [batch, ...more] = cluster.batches();
    expect(more).toEqual([]);
    expect(batch!.offset).toBe(String(EVENTS.length));
    const count = (topic: string) => batch!.records.filter((r) => r.topic === topic).length;
    expect([CONFIG.verdictTopic, CONFIG.spillTopic, CONFIG.auditTopic].map(count)).toEqual([
      want.outputs('verdict'),
      want.outputs('spill-request'),
      want.outputs('audit'),
    ]);
    expect(verdicts(cluster)).toEqual(want.verdicts);
    const changed = batch!.records
      .filter((r) => r.topic === CONFIG.changelogTopic)
      .map((r) => r.message.key!.toString());
    expect(changed.map(sessionOfKey).filter((id) => id !== null)).toEqual([...want.states.keys()]);
    expect(changed).toContain(positionKey(CONFIG.inputTopic));
    expect(statesOf(task)).toEqual(want.states);
    expect({ aborted: cluster.aborted, transactions: seen.transactions }).toEqual({
      aborted: 0,
      transactions: ['committed'],
    });
  });

  it('reads a batch again from its first offset after the task’s pause when its transaction could not begin, then commits it once', async () => {
    const { task, cluster, seen } = await runningTask();
    cluster.failNext('begin', new Error('the coordinator is loading'));

    const batch = batchOf(EVENTS, 0);
    const failed = await task.process(batch, GROUP);

    expect(failed).toMatchObject({ kind: 'retrying', cause: { code: 'BEFORE_TRANSACTION' } });
    expect(seen.seeks).toEqual(['0']);
    expect(cluster.batches()).toEqual([]);
    expect(task.sessions.size).toBe(0);
    expect(task.phase).toBe('running');

    const again = await task.process(batch, GROUP);
    expect(again).toEqual({ kind: 'committed', lastOffset: String(EVENTS.length - 1) });
    expect(cluster.batches()).toHaveLength(1);
    expect(verdicts(cluster)).toEqual(expected(EVENTS).verdicts);
    expect(seen.resyncs).toBe(0);
  });

  it('aborts a transaction whose send failed and resynchronises with a new producer, so the batch read again commits once', async () => {
    const { task, cluster, seen } = await runningTask();
    cluster.failNext('send', protocolError('NOT_LEADER_FOR_PARTITION', 6, true));

    const batch = batchOf(EVENTS, 0);
    const failed = await task.process(batch, GROUP);

    expect(failed).toMatchObject({
      kind: 'resyncing',
      cause: { code: 'TRANSACTION_OUTCOME_UNKNOWN' },
    });
    await abortedThenResynced(task, cluster, seen);
    // Nothing was ever committed, so the input starts over.
    expect(seen.seeks).toEqual(['0']);
    expect(cluster.batches()).toEqual([]);

    expect(await task.process(batch, GROUP)).toEqual({
      kind: 'committed',
      lastOffset: String(EVENTS.length - 1),
    });
    expect(verdicts(cluster)).toEqual(expected(EVENTS).verdicts);
  });

  it('ends a batch as fenced, with nothing committed, when the broker fences its producer; then resynchronises as for any failed transaction', async () => {
    const { task, cluster, seen } = await runningTask();
    cluster.failNext('commit', protocolError('INVALID_PRODUCER_EPOCH', 47, false));

    const outcome = await task.process(batchOf(EVENTS, 0), GROUP);

    expect(outcome).toMatchObject({
      kind: 'fenced',
      cause: { code: 'PRODUCER_FENCED', type: 'INVALID_PRODUCER_EPOCH' },
    });
    expect(cluster.batches()).toEqual([]);
    expect(verdicts(cluster)).toEqual([]);
    expect(task.sessions.size).toBe(0);
    await abortedThenResynced(task, cluster, seen);
  });

  it('restores the committed state and input position in a resync after an aborted transaction', async () => {
    const { task, cluster, seen } = await runningTask();
    const second = haltThenAcknowledgeExample();
    const first = batchOf(EVENTS, 0);
    const next = batchOf(second, EVENTS.length);
    expect(await task.process(first, GROUP)).toMatchObject({ kind: 'committed' });
    const afterFirst = statesOf(task);
    cluster.failNext('offsets', protocolError('REQUEST_TIMED_OUT', 7, true));

    expect(await task.process(next, GROUP)).toMatchObject({ kind: 'resyncing' });
    expect(task.phase).toBe('resyncing');
    await task.whenSettled();

    expect(task.phase).toBe('running');
    expect(statesOf(task)).toEqual(afterFirst);
    expect(seen.seeks).toEqual([String(EVENTS.length)]);
    // The batch read again from there commits once, as if nothing had failed.
    expect(await task.process(next, GROUP)).toMatchObject({ kind: 'committed' });
    const all = expected([...EVENTS, ...second]);
    expect(verdicts(cluster)).toEqual(all.verdicts);
    expect(statesOf(task)).toEqual(all.states);
    expect(cluster.batches().map((b) => b.offset)).toEqual([
      String(EVENTS.length),
      String(EVENTS.length + second.length),
    ]);
  });

  it('a resync whose changelog read misses a committed transaction is not used: it reads again, and the batch is not processed twice', async () => {
    const { task, cluster, seen } = await runningTask();
    const second = haltThenAcknowledgeExample();
    const first = batchOf(EVENTS, 0);
    const next = batchOf(second, EVENTS.length);
    expect(await task.process(first, GROUP)).toMatchObject({ kind: 'committed' });
    // Both commit; then the changelog reads of a resync miss the second, twice.
    expect(await task.process(next, GROUP)).toMatchObject({ kind: 'committed' });
    cluster.hideLastBatch = 2;
    task.resync(new Error('the consumer crashed'));
    await task.whenSettled();

    // Two reads behind the committed offset were not used; the third agreed.
    expect(cluster.hideLastBatch).toBe(0);
    expect(task.phase).toBe('running');
    expect(seen.seeks).toEqual([String(EVENTS.length + second.length)]);
    const all = expected([...EVENTS, ...second]);
    expect(statesOf(task)).toEqual(all.states);
    // Fetched again from an older position, the second batch is skipped, not committed again.
    expect(await task.process(next, GROUP)).toMatchObject({ kind: 'committed', lastOffset: null });
    expect(verdicts(cluster)).toEqual(all.verdicts);
  });

  it("a restore asks the group's committed offsets only of partitions it read a position for: none on a first start", async () => {
    const { task, cluster } = await runningTask();
    expect(cluster.committedAsked).toEqual([]);
    expect(await task.process(batchOf(EVENTS, 0), GROUP)).toMatchObject({ kind: 'committed' });
    task.resync(new Error('the consumer crashed'));
    await task.whenSettled();
    expect(cluster.committedAsked).toEqual([[0]]);
  });

  it('a revoked task touches nothing after a failed transaction: no seek, no resync', async () => {
    const { task, cluster, seen } = await runningTask();
    cluster.failNext('send', protocolError('NOT_LEADER_FOR_PARTITION', 6, true));
    const pending = task.process(batchOf(EVENTS, 0), GROUP);
    task.revoke();
    expect(await pending).toMatchObject({ kind: 'resyncing' });
    expect({ seeks: seen.seeks, resyncs: seen.resyncs, phase: task.phase }).toEqual({
      seeks: [],
      resyncs: 0,
      phase: 'revoked',
    });
  });
});

describe('behindCommitted', () => {
  const target = (partition: number, position: string | null): RestoreTarget => ({
    partition,
    nonce: 'n',
    states: new SessionStates(),
    position,
  });

  it('names only the partitions read back to a position before the committed offset', () => {
    const committed = new Map([
      [0, '10'],
      [1, '10'],
      [2, '10'],
      [3, '10'],
    ]);
    expect(
      behindCommitted(
        [target(0, '9'), target(1, '10'), target(2, '12'), target(3, null), target(4, '0')],
        committed,
      ),
    ).toEqual([{ partition: 0, position: '9', committed: '10' }]);
  });

  it("names what the read saw in the error's message", () => {
    const t = { ...target(0, '9'), read: { records: 12, firstOffset: '0', lastOffset: '40' } };
    const behind = behindCommitted([t], new Map([[0, '10']]));
    expect(new RestoreBehindCommittedError(behind).message).toBe(
      "the changelog was read back to an input position before the group's committed offset " +
        '(partition 0: position 9, committed 10, 12 records read at offsets 0 to 40): committed ' +
        'transactions are missing from what was read; reading again',
    );
    expect(new RestoreBehindCommittedError(behind).code).toBe('RESTORE_BEHIND_COMMITTED');
  });
});
