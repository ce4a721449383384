// Gap 10: the read_committed filter (#filterUncommittedMessages) keys aborted ranges by producer
// id (only the last aborted transaction of a producer per response is filtered) and keeps a range
// whose abort marker is not in the same response.
// One transactional producer writes TXNS transactions of R records each to one partition;
// odd-numbered transactions are aborted, even ones committed; a last committed sentinel follows.
// Then the topic is read read_committed from the start
//   1. by the library's consumer stream (consume(), mode earliest) at several maxBytesPerPartition,
//   2. by the library's low-level consumer.fetch() walk (shows per response what survives),
//   3. by kafkajs (readUncommitted: false) at the same sizes, as the baseline.
// Every record's value says whether its transaction was committed (C) or aborted (A).
import {
  Consumer,
  Producer,
  stringSerializers,
  stringDeserializers,
  MessagesStreamModes,
  FetchIsolationLevels,
  IS_CONTROL,
} from '@platformatic/kafka';
import {
  brokers,
  createTopic,
  RUN,
  attempt,
  offsets,
  readWithKafkajs,
  log,
  fmt,
} from './common.mjs';

const TXNS = Number(process.env.TXNS ?? 20);
const R = Number(process.env.R ?? 5);
const SIZES = (process.env.SIZES ?? '10000000,4000,1500,100').split(',').map(Number);
const topic = process.env.TOPIC ?? `probe-g10-${RUN}`;
const pad = 'x'.repeat(80);

async function produce() {
  await createTopic(topic, 1);
  const p = new Producer({
    clientId: 'probe-g10',
    bootstrapBrokers: brokers(),
    idempotent: true,
    transactionalId: `probe-g10-${RUN}`,
    serializers: stringSerializers,
    timeout: 10000,
    producerId: -1n,
    producerEpoch: -1,
  });
  for (let i = 0; i <= TXNS; i++) {
    const abort = i % 2 === 1 && i < TXNS; // the last one (i == TXNS) is the committed sentinel
    const tag = abort ? 'A' : 'C';
    await p.beginTransaction();
    await p.transaction.send({
      messages: Array.from({ length: R }, (_, j) => ({
        topic,
        partition: 0,
        key: `t${i}`,
        value: `t${i}-${tag}-${j}-${pad}`,
      })),
    });
    if (abort) await p.transaction.abort();
    else await p.transaction.commit();
  }
  log(`produced ${TXNS + 1} transactions of ${R} records (producerId ${p.producerId})`);
  await p.close();
}

function classify(v) {
  return v?.split('-')[1] ?? '?';
}

async function viaStream(size) {
  const consumer = new Consumer({
    groupId: `probe-g10-stream-${RUN}-${size}-${Date.now()}`,
    clientId: 'probe-g10-stream',
    bootstrapBrokers: brokers(),
    deserializers: stringDeserializers,
  });
  const counts = { C: 0, A: 0 };
  const abortedTxns = new Set();
  let fetches = 0;
  const stream = await consumer.consume({
    topics: [topic],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxBytes: size,
    maxBytesPerPartition: size,
    maxWaitTime: 200,
  });
  stream.on('fetch', () => fetches++);
  const done = new Promise((resolve) => {
    let idle = setTimeout(resolve, 8000);
    stream.on('data', (m) => {
      const c = classify(m.value);
      counts[c] = (counts[c] ?? 0) + 1;
      if (c === 'A') abortedTxns.add(m.value.split('-')[0]);
      clearTimeout(idle);
      idle = setTimeout(resolve, m.value.startsWith(`t${TXNS}-C-${R - 1}`) ? 500 : 4000);
    });
  });
  await done;
  await stream.close().catch(() => {});
  await consumer.close(true).catch(() => {});
  return { counts, abortedTxnsDelivered: [...abortedTxns].length, fetches };
}

async function viaRawFetch(size) {
  const consumer = new Consumer({
    groupId: `probe-g10-raw-${RUN}`,
    clientId: 'probe-g10-raw',
    bootstrapBrokers: brokers(),
  });
  const md = await consumer.metadata({ topics: [topic] });
  const t = md.topics.get(topic);
  const leader = t.partitions[0].leader;
  let fetchOffset = 0n;
  const perResponse = [];
  const totals = { C: 0, A: 0 };
  for (let n = 0; n < 500; n++) {
    const res = await consumer.fetch({
      node: leader,
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
      minBytes: 1,
      maxBytes: size,
      maxWaitTime: 100,
      topics: [
        {
          topicId: t.id,
          partitions: [
            {
              partition: 0,
              fetchOffset,
              partitionMaxBytes: size,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
            },
          ],
        },
      ],
    });
    const part = res.responses[0]?.partitions[0];
    const batches = part?.records ?? [];
    if (!batches.length) break;
    let a = 0,
      c = 0,
      ctrl = 0;
    for (const b of batches) {
      if (b.attributes & IS_CONTROL) {
        ctrl++;
        continue;
      }
      for (const r of b.records) {
        const k = classify(r.value?.toString());
        if (k === 'A') a++;
        else c++;
      }
    }
    totals.A += a;
    totals.C += c;
    const last = batches[batches.length - 1];
    perResponse.push(
      `@${fetchOffset}: abortedTxnsListed=${part.abortedTransactions?.length ?? 0} dataBatchesKept=${batches.length - ctrl} ctrl=${ctrl} C=${c} A=${a}`,
    );
    const next = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
    if (next <= fetchOffset) {
      perResponse.push(`@${fetchOffset}: STUCK (filtered list ends before the fetch offset)`);
      break;
    }
    fetchOffset = next;
    if (fetchOffset >= part.lastStableOffset) break;
  }
  await consumer.close(true).catch(() => {});
  return { totals, responses: perResponse.length, perResponse };
}

async function main() {
  log(
    `node ${process.version}, brokers ${brokers()}, topic ${topic}, TXNS=${TXNS} (odd aborted) + sentinel, R=${R}`,
  );
  if (!process.env.TOPIC) await produce();
  console.log('offsets', fmt(await offsets(topic, 1)));
  console.log(
    `expected read_committed: C=${(Math.floor(TXNS / 2) + 1) * R} A=0 ; aborted records written: ${Math.ceil(TXNS / 2) * R}`,
  );
  for (const size of SIZES) {
    console.log(`\n--- maxBytes = maxBytesPerPartition = ${size} ---`);
    const s = await attempt(`platformatic stream size=${size}`, () => viaStream(size), 60000);
    const r = await attempt(
      `platformatic raw fetch walk size=${size}`,
      async () => {
        const x = await viaRawFetch(size);
        return { totals: x.totals, responses: x.responses };
      },
      60000,
    );
    const k = await attempt(
      `kafkajs readUncommitted:false size=${size}`,
      () =>
        readWithKafkajs(topic, {
          readUncommitted: false,
          maxBytesPerPartition: size,
          maxBytes: Math.max(size, 1024),
          idleMs: 4000,
          classify,
        }),
      60000,
    );
    console.log(
      `RESULT size=${size}: platformatic stream A=${s.value?.counts.A} C=${s.value?.counts.C} (aborted txns leaked: ${s.value?.abortedTxnsDelivered}) | raw fetch A=${r.value?.totals.A} C=${r.value?.totals.C} | kafkajs A=${k.value?.['p0:A'] ?? 0} C=${k.value?.['p0:C'] ?? 0}`,
    );
  }
  if (process.env.SHOW_RESPONSES) {
    for (const size of SIZES) {
      const x = await viaRawFetch(size);
      console.log(`\nraw fetch responses at size=${size}:`);
      for (const l of x.perResponse) console.log('  ' + l);
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('probe crashed', e);
    process.exit(2);
  },
);
