/**
 * The read_committed filter of the platformatic transport (src/kafka/platformatic/records.ts)
 * against a reference model: a generated log of transactions of several producers, committed or
 * aborted, interleaved with non-transactional writes, fetched from any offset in any number of
 * whole batches, as the broker answers a read_committed Fetch. Responses are built in
 * @platformatic/kafka's decoded shape (dist/apis/consumer/fetch-v17.d.ts,
 * dist/protocol/records.d.ts).
 */
import fc from 'fast-check';
import type { fetchV17, KafkaRecord, RecordsBatch } from '@platformatic/kafka';
import {
  committedBatches,
  fetchedBatch,
  headersOf,
  libraryMayHaveDropped,
  withUnfilteredBatches,
} from '../../src/kafka/platformatic/records';

const TRANSACTIONAL = 1 << 4;
const CONTROL = 1 << 5;
const LOG_APPEND_TIME = 1 << 3;

type Step =
  | { kind: 'write'; producer: number; n: number }
  | { kind: 'end'; producer: number; commit: boolean }
  | { kind: 'plain'; n: number }
  /**
   * An abort marker of a transaction that wrote nothing to this partition (its produce refused
   * or truncated): Kafka writes the marker and lists no aborted transaction for it (gap 13).
   */
  | { kind: 'dataless-abort'; producer: number };

interface Log {
  batches: RecordsBatch[];
  /** Every data record's offset and whether a read_committed reader sees it. */
  records: { offset: bigint; visible: boolean }[];
  aborted: { producerId: bigint; firstOffset: bigint; markerOffset: bigint }[];
}

const record = (offsetDelta: number, value: Buffer, key: Buffer | null = null): KafkaRecord => ({
  length: 0,
  attributes: 0,
  timestampDelta: BigInt(offsetDelta),
  offsetDelta,
  key,
  value,
  headers: [],
});

function batch(
  firstOffset: bigint,
  records: KafkaRecord[],
  attributes: number,
  producerId: bigint,
): RecordsBatch {
  return {
    firstOffset,
    length: 0,
    partitionLeaderEpoch: 0,
    magic: 2,
    crc: 0,
    attributes,
    lastOffsetDelta: records.length - 1,
    firstTimestamp: 1_000n,
    maxTimestamp: 1_000n + BigInt(records.length - 1),
    producerId,
    producerEpoch: 0,
    firstSequence: 0,
    records,
  };
}

const marker = (offset: bigint, producerId: bigint, commit: boolean) =>
  batch(
    offset,
    [record(0, Buffer.alloc(6), Buffer.from([0, 0, 0, commit ? 1 : 0]))],
    TRANSACTIONAL | CONTROL,
    producerId,
  );

/** The log the steps write; transactions still open at the end are committed. */
function logOf(steps: Step[]): Log {
  const log: Log = { batches: [], records: [], aborted: [] };
  const open = new Map<number, { firstOffset: bigint; offsets: bigint[] }>();
  let next = 0n;
  const data = (n: number, attributes: number, producerId: bigint) => {
    const first = next;
    log.batches.push(
      batch(
        first,
        Array.from({ length: n }, (_, i) => record(i, Buffer.from(String(first + BigInt(i))))),
        attributes,
        producerId,
      ),
    );
    next += BigInt(n);
    return Array.from({ length: n }, (_, i) => first + BigInt(i));
  };
  const end = (producer: number, commit: boolean) => {
    const txn = open.get(producer)!;
    open.delete(producer);
    const producerId = BigInt(1000 + producer);
    for (const offset of txn.offsets) log.records.push({ offset, visible: commit });
    if (!commit) log.aborted.push({ producerId, firstOffset: txn.firstOffset, markerOffset: next });
    log.batches.push(marker(next, producerId, commit));
    next += 1n;
  };
  for (const s of steps) {
    if (s.kind === 'plain') {
      for (const offset of data(s.n, 0, -1n)) log.records.push({ offset, visible: true });
    } else if (s.kind === 'dataless-abort') {
      if (open.has(s.producer)) continue;
      log.batches.push(marker(next, BigInt(1000 + s.producer), false));
      next += 1n;
    } else if (s.kind === 'write') {
      const txn = open.get(s.producer) ?? { firstOffset: next, offsets: [] };
      open.set(s.producer, txn);
      txn.offsets.push(...data(s.n, TRANSACTIONAL, BigInt(1000 + s.producer)));
    } else if (open.has(s.producer)) {
      end(s.producer, s.commit);
    }
  }
  for (const producer of [...open.keys()]) end(producer, true);
  log.records.sort((a, b) => (a.offset < b.offset ? -1 : 1));
  return log;
}

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('write' as const),
    producer: fc.nat(1),
    n: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ kind: fc.constant('end' as const), producer: fc.nat(1), commit: fc.boolean() }),
  fc.record({ kind: fc.constant('plain' as const), n: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('dataless-abort' as const), producer: fc.nat(1) }),
);

/**
 * The broker's read_committed answer from `fetchOffset`: whole batches from the one holding it,
 * `count` of them (a size limit's cut), and the aborted transactions overlapping them, as the
 * broker lists them (`inLogOrder`: by their markers' offsets) and listed in `order` (`aborted`:
 * the transport's filter must not rely on the broker's order).
 */
function response(log: Log, fetchOffset: bigint, count: number, order: number[]) {
  const from = log.batches.findIndex(
    (b) => b.firstOffset + BigInt(b.lastOffsetDelta) >= fetchOffset,
  );
  const batches = log.batches.slice(from, from + count);
  const last = batches[batches.length - 1]!;
  const upper = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
  // read_uncommitted from the same offset: at least as far (the same size limit, up to the high
  // watermark rather than the last stable offset), here some batches further.
  const uncommitted = log.batches.slice(from, from + count + 3);
  const listed = log.aborted
    .filter((a) => a.markerOffset >= fetchOffset && a.firstOffset < upper)
    .map(({ producerId, firstOffset }) => ({ producerId, firstOffset }));
  const shuffled = listed
    .map((a, i) => ({ a, k: order[i % Math.max(order.length, 1)] ?? i }))
    .sort((x, y) => x.k - y.k)
    .map((x) => x.a);
  return { batches, uncommitted, upper, aborted: shuffled, inLogOrder: listed };
}

/**
 * What the transport's fetch source (src/kafka/platformatic/fetchSource.ts) makes of a
 * read_committed response the library has filtered: read again read_uncommitted where the
 * library's filter may have cut committed batches.
 */
function throughTheLibrary(r: ReturnType<typeof response>) {
  const raw = {
    highWatermark: 99n,
    abortedTransactions: r.aborted,
    records: libraryFilter(r.batches, r.inLogOrder),
  };
  return libraryMayHaveDropped(raw) ? withUnfilteredBatches(raw, r.uncommitted) : raw;
}

/**
 * @platformatic/kafka 2.12.1's own filter (dist/clients/consumer/consumer.js:1879-1912), which
 * `consumer.fetch()` applies before the transport sees the response: one range per producer
 * (the last listed), kept only when its abort marker is in the response.
 */
function libraryFilter(
  batches: RecordsBatch[],
  aborted: fetchV17.FetchResponsePartitionAbortedTransaction[],
) {
  if (aborted.length === 0) return batches;
  const ranges = new Map<bigint, [bigint, bigint]>();
  for (const a of aborted) ranges.set(a.producerId, [a.firstOffset, -1n]);
  for (const b of batches) {
    if (b.attributes & CONTROL && b.records[0]!.key?.readInt16BE(2) === 0) {
      const r = ranges.get(b.producerId);
      if (r) r[1] = b.firstOffset;
    }
  }
  return batches.filter((b) => {
    const r = ranges.get(b.producerId);
    return !r || !(r[1] !== -1n && b.firstOffset >= r[0] && b.firstOffset < r[1]);
  });
}

const fetchCase = fc
  .record({
    steps: fc.array(step, { minLength: 1, maxLength: 60, size: 'large' }),
    at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    count: fc.integer({ min: 1, max: 60 }),
    order: fc.array(fc.nat(100), { maxLength: 20 }),
    libraryFirst: fc.boolean(),
  })
  .map((c) => ({ ...c, log: logOf(c.steps) }))
  // Steps that only end transactions never begun write nothing.
  .filter(({ log }) => log.batches.length > 0)
  .map((c) => {
    const { log } = c;
    const end = log.batches[log.batches.length - 1]!;
    const size = Number(end.firstOffset) + end.lastOffsetDelta + 1;
    return { ...c, fetchOffset: BigInt(Math.floor(c.at * size)) };
  });

describe('read_committed filter of a raw fetch response (platformatic records.ts)', () => {
  it("delivers exactly the committed and non-transactional records of the window, in order, whatever the cut and the listing order, data-less abort markers among them, the library's own filter before it or not", () => {
    fc.assert(
      fc.property(fetchCase, ({ log, fetchOffset, count, order, libraryFirst }) => {
        const r = response(log, fetchOffset, count, order);
        const raw = libraryFirst
          ? throughTheLibrary(r)
          : { highWatermark: 99n, abortedTransactions: r.aborted, records: r.batches };
        const got = fetchedBatch('t', 0, raw, fetchOffset)!;
        const expected = log.records
          .filter((x) => x.visible && x.offset >= fetchOffset && x.offset < r.upper)
          .map((x) => x.offset.toString());
        expect(got.messages.map((m) => m.offset)).toEqual(expected);
        expect(got.messages.map((m) => m.value!.toString())).toEqual(expected);
        // The position moves past everything fetched, markers and aborted records included.
        expect(got.lastOffset()).toBe((r.upper - 1n).toString());
        expect(got.firstOffset()).toBe(expected[0] ?? null);
      }),
      { numRuns: 500 },
    );
  });

  it('filters every aborted transaction of one producer in one response, markers beyond the response included (the probe of gap 10)', () => {
    // 21 transactions of 5 records of one producer, the odd ones aborted: the probe's log.
    const steps: Step[] = [];
    for (let i = 0; i <= 20; i++) {
      steps.push({ kind: 'write', producer: 0, n: 5 });
      steps.push({ kind: 'end', producer: 0, commit: i % 2 === 0 || i === 20 });
    }
    const log = logOf(steps);
    for (let count = 1; count <= log.batches.length; count++) {
      const delivered: string[] = [];
      let position = 0n;
      // Walk the log as the fetch loop does: each response from the position after the last.
      while (position < BigInt(log.batches.length * 3)) {
        const from = log.batches.findIndex(
          (b) => b.firstOffset + BigInt(b.lastOffsetDelta) >= position,
        );
        if (from === -1) break;
        const r = response(log, position, count, []);
        const b = fetchedBatch(
          't',
          0,
          {
            highWatermark: 0n,
            abortedTransactions: r.aborted,
            records: libraryFilter(r.batches, r.inLogOrder),
          },
          position,
        )!;
        delivered.push(...b.messages.map((m) => m.offset));
        position = BigInt(b.lastOffset()) + 1n;
      }
      expect(delivered).toEqual(
        log.records.filter((x) => x.visible).map((x) => x.offset.toString()),
      );
    }
  });

  it("relies on the broker listing one producer's aborted transactions in log order only through the library's own filter", () => {
    // Aborted, committed, aborted, all of one producer: listed last-first, the library's filter
    // (one range per producer, the last listed) would drop the committed transaction too.
    const log = logOf([
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: false },
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: true },
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: false },
    ]);
    const r = response(log, 0n, 100, [2, 1]);
    expect(r.aborted.map((a) => a.firstOffset)).toEqual([6n, 0n]);
    const batch = (records: RecordsBatch[]) =>
      fetchedBatch('t', 0, { highWatermark: 9n, abortedTransactions: r.aborted, records }, 0n)!;
    const committed = ['3', '4'];
    expect(batch(r.batches).messages.map((m) => m.offset)).toEqual(committed);
    expect(batch(libraryFilter(r.batches, r.inLogOrder)).messages.map((m) => m.offset)).toEqual(
      committed,
    );
    expect(batch(libraryFilter(r.batches, r.aborted)).messages).toEqual([]);
  });

  it('reads again, unfiltered, a response whose data-less abort marker made the library cut the committed transaction before it (the probe of gap 13)', () => {
    // Aborted (listed), committed, then an abort marker with no data of its own (not listed).
    const log = logOf([
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: false },
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: true },
      { kind: 'dataless-abort', producer: 0 },
    ]);
    const r = response(log, 0n, 100, []);
    expect(r.inLogOrder).toEqual([{ producerId: 1000n, firstOffset: 0n }]);
    const filtered = {
      highWatermark: 7n,
      abortedTransactions: r.aborted,
      records: libraryFilter(r.batches, r.inLogOrder),
    };
    // The library leaves only the last marker: the committed records 3 and 4 are gone.
    expect(filtered.records.map((b) => b.firstOffset)).toEqual([6n]);
    expect(fetchedBatch('t', 0, filtered, 0n)!.messages).toEqual([]);
    expect(libraryMayHaveDropped(filtered)).toBe(true);
    const repaired = fetchedBatch('t', 0, withUnfilteredBatches(filtered, r.uncommitted), 0n)!;
    expect(repaired.messages.map((m) => m.offset)).toEqual(['3', '4']);
    expect(repaired.lastOffset()).toBe('6');
  });

  it('trusts a response without an abort marker of a listed producer (no second fetch)', () => {
    const log = logOf([
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: false },
      { kind: 'write', producer: 1, n: 2 },
      { kind: 'end', producer: 1, commit: true },
    ]);
    const whole = response(log, 0n, 100, []);
    const noMarker = {
      highWatermark: 7n,
      abortedTransactions: whole.aborted,
      records: [log.batches[0]!],
    };
    expect(libraryMayHaveDropped(noMarker)).toBe(false);
    const nothingListed = { highWatermark: 7n, abortedTransactions: [], records: log.batches };
    expect(libraryMayHaveDropped(nothingListed)).toBe(false);
    expect(
      libraryMayHaveDropped({
        highWatermark: 7n,
        abortedTransactions: whole.aborted,
        records: log.batches,
      }),
    ).toBe(true);
  });

  it("cuts the read_uncommitted batches at the read_committed response's last offset", () => {
    const log = logOf([
      { kind: 'write', producer: 0, n: 2 },
      { kind: 'end', producer: 0, commit: false },
      { kind: 'plain', n: 3 },
      { kind: 'write', producer: 0, n: 1 },
    ]);
    const committed = {
      highWatermark: 9n,
      abortedTransactions: [],
      records: log.batches.slice(0, 2),
    };
    expect(withUnfilteredBatches(committed, log.batches).records.map((b) => b.firstOffset)).toEqual(
      [0n, 2n],
    );
    const none = { highWatermark: 9n, abortedTransactions: [], records: [] };
    expect(withUnfilteredBatches(none, log.batches)).toBe(none);
  });

  it('never delivers control batches, not even of a producer with no aborted transaction', () => {
    const batches = [marker(0n, 7n, true), marker(1n, 7n, false)];
    expect(committedBatches(batches, null)).toEqual([]);
    expect(
      fetchedBatch(
        't',
        0,
        { highWatermark: 2n, abortedTransactions: null, records: batches },
        0n,
      )!.lastOffset(),
    ).toBe('1');
  });

  it('says null for a response without batches', () => {
    expect(
      fetchedBatch('t', 0, { highWatermark: 0n, abortedTransactions: [], records: null }, 0n),
    ).toBeNull();
  });

  it('drops the records below the position asked for (a batch is fetched whole)', () => {
    const b = batch(
      10n,
      [0, 1, 2].map((i) => record(i, Buffer.from('v'))),
      0,
      -1n,
    );
    const got = fetchedBatch(
      't',
      3,
      { highWatermark: 13n, abortedTransactions: null, records: [b] },
      12n,
    )!;
    expect(got.messages.map((m) => m.offset)).toEqual(['12']);
    expect(got).toMatchObject({ topic: 't', partition: 3, highWatermark: '13' });
  });

  it('gives timestamps in ms strings, the batch maximum under log append time', () => {
    const timestamps = (b: RecordsBatch) =>
      fetchedBatch(
        't',
        0,
        { highWatermark: 2n, abortedTransactions: null, records: [b] },
        0n,
      )!.messages.map((m) => m.timestamp);
    const create = batch(0n, [record(0, Buffer.from('a')), record(1, Buffer.from('b'))], 0, -1n);
    expect(timestamps(create)).toEqual(['1000', '1001']);
    expect(timestamps({ ...create, attributes: LOG_APPEND_TIME, maxTimestamp: 5_000n })).toEqual([
      '5000',
      '5000',
    ]);
  });
  it('keeps a header given twice as an array of its values, in order', () => {
    const h = headersOf([
      [Buffer.from('a'), Buffer.from('1')],
      [Buffer.from('b'), Buffer.from('2')],
      [Buffer.from('a'), Buffer.from('3')],
      [Buffer.from('a'), Buffer.from('4')],
    ]);
    expect(h).toEqual({
      a: [Buffer.from('1'), Buffer.from('3'), Buffer.from('4')],
      b: Buffer.from('2'),
    });
  });
});
