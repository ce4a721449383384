/**
 * The rules of the platformatic transport's fetch loop (src/kafka/platformatic/fetchLoop.ts),
 * driven by a fake FetchSource: positions, seek, pause, revocation, one fetch per leader, a
 * partition's next batch only after its handler (fetched ahead meanwhile, handed over only in
 * place), the handlers' bound, and the assignment diff of the group consumer (assignment.ts).
 */
import type { RecordsBatch } from '@platformatic/kafka';
import fc from 'fast-check';
import { assignmentChange, topicPartitions } from '../../src/kafka/platformatic/assignment';
import {
  FetchLoop,
  type BatchHandler,
  type FetchedPartition,
  type FetchSource,
} from '../../src/kafka/platformatic/fetchLoop';
import { Semaphore } from '../../src/kafka/platformatic/semaphore';
import type { FetchedBatch } from '../../src/kafka/transport/records';

const TOPIC = 't';
const PER_FETCH = 3;

function plainBatch(first: bigint, count: number, partition: number): RecordsBatch {
  return {
    firstOffset: first,
    length: 0,
    partitionLeaderEpoch: 0,
    magic: 2,
    crc: 0,
    attributes: 0,
    lastOffsetDelta: count - 1,
    firstTimestamp: 0n,
    maxTimestamp: 0n,
    producerId: -1n,
    producerEpoch: -1,
    firstSequence: -1,
    records: Array.from({ length: count }, (_, i) => ({
      length: 0,
      attributes: 0,
      timestampDelta: 0n,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`${partition}:${first + BigInt(i)}`),
      headers: [],
    })),
  };
}

/** A commit marker: a control batch of one record, nothing to deliver. */
function markerBatch(offset: bigint): RecordsBatch {
  return {
    ...plainBatch(offset, 1, 0),
    attributes: (1 << 4) | (1 << 5),
    producerId: 9n,
    records: [{ ...plainBatch(offset, 1, 0).records[0]!, key: Buffer.from([0, 0, 0, 1]) }],
  };
}

interface Fake extends FetchSource {
  fetches: { node: number; partitions: number[]; offsets: bigint[] }[];
  freshLayouts: number;
  /** While set, fetches wait for it. */
  gate: Promise<void> | null;
  inFlight: Map<number, number>;
  maxInFlightPerNode: number;
  errorOnce: Map<number, number>;
  markersAt: Set<bigint>;
}

/** Partitions 0 and 1 led by node 1, 2 by node 2; each holds `size` records from `start`. */
function fakeSource(size = 9, start = 0n): Fake {
  const fake: Fake = {
    fetches: [],
    freshLayouts: 0,
    gate: null,
    inFlight: new Map(),
    maxInFlightPerNode: 0,
    errorOnce: new Map(),
    markersAt: new Set(),
    async layout(fresh) {
      if (fresh) fake.freshLayouts += 1;
      return {
        topicId: 'id',
        leaders: new Map([
          [0, 1],
          [1, 1],
          [2, 2],
        ]),
      };
    },
    async fetch(node, _topicId, positions) {
      fake.fetches.push({
        node,
        partitions: positions.map((p) => p.partition),
        offsets: positions.map((p) => p.offset),
      });
      const now = (fake.inFlight.get(node) ?? 0) + 1;
      fake.inFlight.set(node, now);
      fake.maxInFlightPerNode = Math.max(fake.maxInFlightPerNode, now);
      await new Promise((r) => setImmediate(r));
      if (fake.gate) await fake.gate;
      fake.inFlight.set(node, (fake.inFlight.get(node) ?? 1) - 1);
      return positions.map(({ partition, offset }): FetchedPartition => {
        const code = fake.errorOnce.get(partition);
        if (code !== undefined) fake.errorOnce.delete(partition);
        const end = start + BigInt(size);
        const from = offset < start ? start : offset;
        const records: RecordsBatch[] = [];
        if (fake.markersAt.has(from)) records.push(markerBatch(from));
        else if (code === undefined && from < end) {
          const count = Number(end - from < PER_FETCH ? end - from : BigInt(PER_FETCH));
          records.push(plainBatch(from, count, partition));
        }
        return {
          partitionIndex: partition,
          errorCode: code ?? 0,
          highWatermark: end,
          abortedTransactions: [],
          records,
        };
      });
    },
    async earliest(partitions) {
      return new Map(partitions.map((p) => [p, start]));
    },
  };
  return fake;
}

async function until(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const offsetsOf = (b: FetchedBatch) => b.messages.map((m) => m.offset);

function started(
  source: FetchSource,
  handler: BatchHandler,
  partitions = [0, 1, 2],
  concurrently = 3,
) {
  const errors: unknown[] = [];
  const handlerErrors: { e: unknown; stale: boolean }[] = [];
  const loop = new FetchLoop(
    source,
    {
      topic: TOPIC,
      partitionsConcurrently: concurrently,
      onError: (e) => errors.push(e),
      onHandlerError: (e, stale) => handlerErrors.push({ e, stale }),
    },
    handler,
  );
  loop.add(partitions);
  for (const p of partitions) loop.place(p, 0n);
  loop.start();
  return { loop, errors, handlerErrors };
}

/** A started loop whose handler keeps each batch and resolves it whole. */
function recording(source: FetchSource, partitions = [0, 1, 2]) {
  const batches: FetchedBatch[] = [];
  const x = started(
    source,
    async (b, c) => {
      batches.push(b);
      c.resolveOffset(b.lastOffset());
    },
    partitions,
  );
  /** The offsets delivered of `partition`, or each batch's of all. */
  const offsets = (partition: number) =>
    batches.filter((b) => b.partition === partition).flatMap(offsetsOf);
  return { ...x, batches, offsets };
}

describe('fetch loop of the platformatic transport', () => {
  let stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.map((s) => s()));
    stops = [];
  });
  const track = <T extends { loop: FetchLoop }>(x: T) => {
    stops.push(() => x.loop.stop(1000));
    return x;
  };

  it('delivers each partition in order, from where the handler resolved, one fetch per leader at a time', async () => {
    const fake = fakeSource();
    const r = track(recording(fake));
    await until(() => [0, 1, 2].every((p) => r.offsets(p).length === 9));
    for (const p of [0, 1, 2])
      expect(r.offsets(p)).toEqual(Array.from({ length: 9 }, (_, i) => String(i)));
    expect(fake.maxInFlightPerNode).toBe(1);
    // Partitions of one leader share its fetch.
    expect(fake.fetches.some((f) => f.node === 1 && f.partitions.length === 2)).toBe(true);
  });
  it('reads a batch again when its handler resolved nothing, and from the resolved offset when it resolved part', async () => {
    const fake = fakeSource();
    const batches: string[][] = [];
    let calls = 0;
    track(
      started(
        fake,
        async (b, c) => {
          batches.push(offsetsOf(b));
          calls += 1;
          if (calls === 2) c.resolveOffset('0');
          if (calls >= 3) c.resolveOffset(b.lastOffset());
        },
        [0],
      ),
    );
    await until(() => batches.length >= 4);
    expect(batches.slice(0, 4)).toEqual([
      ['0', '1', '2'],
      ['0', '1', '2'],
      ['1', '2', '3'],
      ['4', '5', '6'],
    ]);
  });

  it('never runs two handlers of one partition at once, nor more than partitionsConcurrently in all', async () => {
    const fake = fakeSource(30);
    const active = new Set<number>();
    let most = 0;
    let overlap = false;
    let done = 0;
    track(
      started(
        fake,
        async (b, c) => {
          if (active.has(b.partition)) overlap = true;
          active.add(b.partition);
          most = Math.max(most, active.size);
          await new Promise((r) => setTimeout(r, 2));
          active.delete(b.partition);
          c.resolveOffset(b.lastOffset());
          done += 1;
        },
        [0, 1, 2],
        2,
      ),
    );
    await until(() => done >= 30);
    expect(overlap).toBe(false);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('delivers nothing of a partition sought during the fetch, and reads from the sought offset', async () => {
    const fake = fakeSource();
    let open!: () => void;
    fake.gate = new Promise<void>((r) => (open = r));
    const r = track(recording(fake, [0]));
    await until(() => fake.fetches.length === 1);
    r.loop.seek(0, 6n);
    fake.gate = null;
    open();
    await until(() => r.batches.length >= 1);
    expect(offsetsOf(r.batches[0]!)).toEqual(['6', '7', '8']);
  });
  it('delivers nothing of a partition paused during the fetch, fetches it no more, and goes on after resume', async () => {
    const fake = fakeSource();
    let open!: () => void;
    fake.gate = new Promise<void>((r) => (open = r));
    const r = track(recording(fake, [0, 1]));
    await until(() => fake.fetches.length === 1);
    r.loop.pause([0]);
    fake.gate = null;
    open();
    await until(() => r.offsets(1).length === 9);
    expect(r.offsets(0)).toEqual([]);
    expect(fake.fetches.slice(1).every((f) => !f.partitions.includes(0))).toBe(true);
    r.loop.resume([0]);
    await until(() => r.offsets(0).length === 9);
    expect(r.offsets(0)[0]).toBe('0');
  });
  it('makes a batch stale when its partition is revoked or sought during the handler, and ignores what it resolves then', async () => {
    const fake = fakeSource();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const stale: boolean[] = [];
    const batches: string[][] = [];
    const { loop } = track(
      started(
        fake,
        async (b, c) => {
          batches.push(offsetsOf(b));
          if (batches.length === 1) {
            stale.push(c.isStale());
            await held;
            stale.push(c.isStale());
          }
          c.resolveOffset(b.lastOffset());
        },
        [0, 1],
      ),
    );
    await until(() => batches.length >= 1 && stale.length === 1);
    const first = batches[0]!;
    const partition = fake.fetches[0]!.partitions[0]!;
    loop.seek(partition, 1n);
    release();
    await until(() => stale.length === 2);
    expect(stale).toEqual([false, true]);
    // The sought position wins over what the stale batch resolved.
    await until(() => batches.length >= 3);
    expect(first).toEqual(['0', '1', '2']);
    expect(batches.slice(1)).toContainEqual(['1', '2', '3']);
    loop.remove([partition]);
    expect(loop.isOwned(partition)).toBe(false);
  });

  it("fetches a partition's next batch while its batch is in the handler, and hands it over right after, from where that batch ended", async () => {
    const fake = fakeSource(9);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const batches: string[][] = [];
    track(
      started(
        fake,
        async (b, c) => {
          batches.push(offsetsOf(b));
          if (batches.length === 1) await held;
          c.resolveOffset(b.lastOffset());
        },
        [2],
      ),
    );
    // While the first batch (0-2) is held, the partition is fetched again from 3.
    await until(() => fake.fetches.some((f) => f.offsets[0] === 3n));
    expect(batches).toEqual([['0', '1', '2']]);
    const fetchesBefore = fake.fetches.length;
    release();
    await until(() => batches.length >= 2);
    expect(batches[1]).toEqual(['3', '4', '5']);
    // The batch fetched ahead was handed over as it was, not fetched once more.
    expect(fake.fetches.slice(fetchesBefore).some((f) => f.offsets[0] === 3n)).toBe(false);
  });

  it('hands a batch over only where its partition is: whatever each handler resolves and wherever seeks move it, each batch starts at the position', async () => {
    const FURTHEST_SEEK = 20;
    const MOST_ACTIONS = 12;
    // Per batch: resolve all, part, nothing, or seek somewhere during the handler.
    const actionArb = fc.oneof(
      fc.constant({ kind: 'all' as const }),
      fc.constant({ kind: 'part' as const }),
      fc.constant({ kind: 'none' as const }),
      fc.integer({ min: 0, max: FURTHEST_SEEK }).map((to) => ({ kind: 'seek' as const, to })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(actionArb, { minLength: 1, maxLength: MOST_ACTIONS }),
        async (actions) => {
          // Longer than any run can read (the furthest seek, then a batch per action), so that a
          // batch always comes for each action: with 30 records, runs of mostly `all` read to the
          // end and waited for a batch that never came (a test timeout, about one run in four).
          const fake = fakeSource(FURTHEST_SEEK + (MOST_ACTIONS + 1) * PER_FETCH);
          // Where the next batch must start (the loop's position, as the handlers left it).
          let expected = 0n;
          const wrong: string[] = [];
          let i = 0;
          let done!: () => void;
          const finished = new Promise<void>((r) => (done = r));
          const x = started(
            fake,
            async (b, c) => {
              const first = BigInt(b.firstOffset()!);
              if (first !== expected) wrong.push(`batch ${i} at ${first}, expected ${expected}`);
              const action = actions[i++];
              if (action === undefined) {
                done();
                return;
              }
              // Let a fetch ahead happen while the handler holds the batch.
              await new Promise((r) => setTimeout(r, 2));
              if (action.kind === 'all') {
                c.resolveOffset(b.lastOffset());
                expected = BigInt(b.lastOffset()) + 1n;
              } else if (action.kind === 'part') {
                c.resolveOffset(b.firstOffset()!);
                expected = first + 1n;
              } else if (action.kind === 'seek') {
                x.loop.seek(2, BigInt(action.to));
                expected = BigInt(action.to);
              }
            },
            [2],
          );
          // Bounded, and the loop stopped whatever happens: a loop left running after a failed
          // run polls its source for ever, and jest never exits.
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<void>((r) => (timer = setTimeout(r, 3_000)));
          try {
            await Promise.race([finished, late.then(() => wrong.push(`no batch for action ${i}`))]);
          } finally {
            clearTimeout(timer);
            await x.loop.stop(1000);
          }
          expect(wrong).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('moves past a fetch that holds only control records, without calling the handler', async () => {
    const fake = fakeSource(9);
    fake.markersAt.add(0n);
    const r = track(recording(fake, [2]));
    await until(() => r.batches.length >= 1);
    expect(offsetsOf(r.batches[0]!)).toEqual(['1', '2', '3']);
  });
  it('reads an out-of-range partition from its earliest offset, and asks the layout again after another partition error', async () => {
    const fake = fakeSource(9, 4n);
    fake.errorOnce.set(0, 1);
    fake.errorOnce.set(2, 6);
    const r = track(recording(fake));
    await until(() => r.offsets(0).length === 9 && r.offsets(2).length === 9);
    expect(r.offsets(0)[0]).toBe('4');
    expect(fake.freshLayouts).toBeGreaterThan(0);
    expect(r.errors).toEqual([]);
  });
  it('reports a failing fetch and tries again', async () => {
    const fake = fakeSource();
    const fetch = fake.fetch.bind(fake);
    let failures = 1;
    fake.fetch = async (...args) => {
      if (failures-- > 0) throw new Error('network');
      return fetch(...args);
    };
    const r = track(recording(fake, [2]));
    await until(() => r.offsets(2).length === 9);
    expect(r.errors).toEqual([new Error('network')]);
  });
  it('reports a rejecting handler, with whether its batch was stale, and reads an unresolved batch again', async () => {
    const fake = fakeSource();
    const batches: string[][] = [];
    let loopRef: FetchLoop | null = null;
    const x = track(
      started(
        fake,
        async (b, c) => {
          batches.push(offsetsOf(b));
          if (batches.length === 1) throw new Error('current');
          if (batches.length === 2) {
            loopRef!.seek(2, 0n);
            throw new Error('stale');
          }
          c.resolveOffset(b.lastOffset());
        },
        [2],
      ),
    );
    loopRef = x.loop;
    await until(() => batches.length >= 3);
    expect(x.handlerErrors).toEqual([
      { e: new Error('current'), stale: false },
      { e: new Error('stale'), stale: true },
    ]);
    expect(batches.slice(0, 3)).toEqual([
      ['0', '1', '2'],
      ['0', '1', '2'],
      ['0', '1', '2'],
    ]);
  });

  it('stops within its grace even when a handler never settles', async () => {
    const fake = fakeSource();
    const { loop } = started(fake, () => new Promise<void>(() => undefined), [0]);
    await until(() => fake.fetches.length >= 1);
    const t0 = Date.now();
    await loop.stop(50);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(loop.running).toBe(false);
  });
});

describe('the handlers bound of the fetch loop (semaphore.ts)', () => {
  it('never runs more than its limit, a task arriving while a slot is handed over included, and runs every task in arrival order', async () => {
    const bound = new Semaphore(2);
    let active = 0;
    let most = 0;
    const order: number[] = [];
    const ends: (() => void)[] = [];
    const task = (i: number) => () => {
      order.push(i);
      active += 1;
      most = Math.max(most, active);
      return new Promise<void>((resolve) =>
        ends.push(() => {
          active -= 1;
          resolve();
        }),
      );
    };
    const runs = [0, 1, 2].map((i) => bound.run(task(i)));
    await new Promise((r) => setImmediate(r));
    // The first task ends; a task arrives in the microtask after the one that frees its slot
    // and before the waiting task takes it.
    ends[0]!();
    queueMicrotask(() => runs.push(bound.run(task(3))));
    await new Promise((r) => setImmediate(r));
    expect(most).toBe(2);
    // The others end as they start.
    for (let ended = 1; ended < 4;) {
      await new Promise((r) => setImmediate(r));
      while (ended < ends.length) ends[ended++]!();
    }
    await Promise.all(runs);
    expect(order).toEqual([0, 1, 2, 3]);
  });
});

describe('assignment diff of the platformatic group consumer', () => {
  it('revokes what left the assignment and adds what entered it', () => {
    expect(assignmentChange([0, 1, 2], [2, 3, 1])).toEqual({ revoked: [0], added: [3] });
    expect(assignmentChange([], [1, 0])).toEqual({ revoked: [], added: [0, 1] });
    expect(assignmentChange([4], [])).toEqual({ revoked: [4], added: [] });
  });

  it("takes the topic's partitions of a join's assignments, once each, ascending", () => {
    expect(
      topicPartitions(
        [
          { topic: 'a', partitions: [3, 1] },
          { topic: 'b', partitions: [0] },
          { topic: 'a', partitions: [1, 2] },
        ],
        'a',
      ),
    ).toEqual([1, 2, 3]);
    expect(topicPartitions(null, 'a')).toEqual([]);
  });
});
