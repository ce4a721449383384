// Gap 13: the read_committed filter (#filterUncommittedMessages) drops committed records when a
// producer's abort marker has no data of its own in the partition.
// Kafka writes an abort marker to every partition a transaction added, even one the transaction
// wrote nothing to (its produce refused, its data truncated by a leader change, or the producer
// killed between AddPartitionsToTxn and Produce). Such a transaction is not in the broker's
// aborted-transactions list: nothing of it is to be filtered. The library's filter keeps one
// range per producer, from the first offset of its last listed aborted transaction to its last
// abort marker in the response. So the range runs from an earlier, real aborted transaction to
// the data-less marker, across every committed transaction in between.
// One transactional producer writes to one partition:
//   1. a transaction of R records, aborted (listed by the broker);
//   2. COMMITTED transactions of R records each, committed;
//   3. a transaction whose only send is refused by the broker (a record above the topic's
//      max.message.bytes), then aborted: the data-less abort marker;
//   4. a last committed transaction (the sentinel).
// Then the partition is read read_committed from the start by the library's raw consumer.fetch()
// and by kafkajs (the baseline). Every record's value says whether its transaction committed (C)
// or aborted (A).
import {
  Consumer,
  Producer,
  stringSerializers,
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

const COMMITTED = Number(process.env.COMMITTED ?? 5);
const R = Number(process.env.R ?? 3);
const MAX_MESSAGE_BYTES = 2000;
const topic = process.env.TOPIC ?? `probe-g13-${RUN}`;

const records = (i, tag) =>
  Array.from({ length: R }, (_, j) => ({
    topic,
    partition: 0,
    key: `t${i}`,
    value: `t${i}-${tag}-${j}`,
  }));

const transactionalProducer = () =>
  new Producer({
    clientId: 'probe-g13',
    bootstrapBrokers: brokers(),
    idempotent: true,
    transactionalId: `probe-g13-${RUN}`,
    serializers: stringSerializers,
    timeout: 10000,
    retries: 0,
    producerId: -1n,
    producerEpoch: -1,
  });

async function produce() {
  await createTopic(topic, 1, [{ name: 'max.message.bytes', value: String(MAX_MESSAGE_BYTES) }]);
  const p = transactionalProducer();
  await p.beginTransaction();
  await p.transaction.send({ messages: records(0, 'A') });
  await p.transaction.abort();
  for (let i = 1; i <= COMMITTED; i++) {
    await p.beginTransaction();
    await p.transaction.send({ messages: records(i, 'C') });
    await p.transaction.commit();
  }
  console.log('offsets before the data-less abort', fmt(await offsets(topic, 1)));
  await p.beginTransaction();
  await attempt('send a record above max.message.bytes (refused)', () =>
    p.transaction.send({
      messages: [
        { topic, partition: 0, key: 'big', value: `big-A-${'x'.repeat(MAX_MESSAGE_BYTES * 2)}` },
      ],
    }),
  );
  await attempt('abort that transaction', () => p.transaction.abort());
  console.log('offsets after it (one more: the marker)', fmt(await offsets(topic, 1)));
  log(`producerId ${p.producerId} epoch ${p.producerEpoch}`);
  await p.close();
  // The refused send spent sequence numbers the broker never saw: the sentinel goes through a
  // new producer of the same transactional id (the same producer id, the next epoch).
  const q = transactionalProducer();
  await q.beginTransaction();
  await q.transaction.send({ messages: records(COMMITTED + 1, 'C') });
  await q.transaction.commit();
  log(`sentinel committed; producerId ${q.producerId} epoch ${q.producerEpoch}`);
  await q.close();
}

const classify = (v) => v?.split('-')[1] ?? '?';

/** One read_committed walk with the library's raw fetch; prints each response. */
async function viaRawFetch() {
  const consumer = new Consumer({
    groupId: `probe-g13-raw-${RUN}`,
    clientId: 'probe-g13-raw',
    bootstrapBrokers: brokers(),
  });
  const t = (await consumer.metadata({ topics: [topic] })).topics.get(topic);
  let fetchOffset = 0n;
  const totals = { C: 0, A: 0 };
  for (let n = 0; n < 100; n++) {
    const res = await consumer.fetch({
      node: t.partitions[0].leader,
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
      minBytes: 1,
      maxBytes: 1048576,
      maxWaitTime: 100,
      topics: [
        {
          topicId: t.id,
          partitions: [
            {
              partition: 0,
              fetchOffset,
              partitionMaxBytes: 1048576,
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
    const kept = [];
    for (const b of batches) {
      if (b.attributes & IS_CONTROL) {
        kept.push(`${b.firstOffset}:${b.records[0].key.readInt16BE(2) === 0 ? 'ABORT' : 'COMMIT'}`);
        continue;
      }
      kept.push(`${b.firstOffset}:data`);
      for (const r of b.records) totals[classify(r.value?.toString())] += 1;
    }
    console.log(
      `  response @${fetchOffset}: aborted listed ${fmt(part.abortedTransactions)}; batches left by the library ${kept.join(' ')}`,
    );
    const last = batches[batches.length - 1];
    fetchOffset = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
    if (fetchOffset >= part.lastStableOffset) break;
  }
  await consumer.close(true).catch(() => {});
  return totals;
}

async function main() {
  log(
    `node ${process.version}, brokers ${brokers()}, topic ${topic}, ${COMMITTED + 1} committed transactions of ${R} records`,
  );
  if (!process.env.TOPIC) await produce();
  const expected = (COMMITTED + 1) * R;
  const r = await attempt('platformatic raw fetch, read_committed', viaRawFetch, 60000);
  const k = await attempt(
    'kafkajs readUncommitted:false',
    () => readWithKafkajs(topic, { readUncommitted: false, idleMs: 4000, classify }),
    60000,
  );
  console.log(
    `RESULT committed records ${expected}: platformatic raw fetch C=${r.value?.C} A=${r.value?.A} | kafkajs C=${k.value?.['p0:C'] ?? 0} A=${k.value?.['p0:A'] ?? 0}`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('probe crashed', e);
    process.exit(2);
  },
);
