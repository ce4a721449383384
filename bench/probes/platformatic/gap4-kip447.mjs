// KIP-447 check (+ gap 2 for addOffset):
//  1. consumer C1 in group G consumes topic IN (2 partitions); a transactional producer commits
//     the offset of a consumed message (addConsumer + addOffset) with C1's generation: OK?
//  2. gap 2b: two concurrent addOffset calls (p0 and p1) in one transaction, commit: which
//     offsets reach the group (Admin.listConsumerGroupOffsets requireStable)?
//  3. a second member C2 joins G, C1's generation moves; addOffset with a message consumed in
//     the old generation: refused? with which error?
//  4. control: a Message-shaped object carrying C1's *current* generation/member: accepted?
import {
  Admin,
  Consumer,
  Producer,
  stringSerializers,
  stringDeserializers,
  MessagesStreamModes,
} from '@platformatic/kafka';
import { brokers, createTopic, RUN, attempt, log, fmt, sleep, printError } from './common.mjs';

const IN = `probe-g4-in-${RUN}`;
const OUT = `probe-g4-out-${RUN}`;
const G = `probe-g4-group-${RUN}`;

async function committed() {
  const admin = new Admin({ clientId: 'probe-g4-admin', bootstrapBrokers: brokers() });
  try {
    const res = await admin.listConsumerGroupOffsets({ groups: [G], requireStable: true });
    const out = {};
    for (const t of res[0]?.topics ?? [])
      for (const p of t.partitions) out[`p${p.partitionIndex}`] = p.committedOffset;
    return out;
  } finally {
    await admin.close();
  }
}

function mkConsumer(name) {
  return new Consumer({
    groupId: G,
    clientId: `probe-g4-${name}`,
    bootstrapBrokers: brokers(),
    deserializers: stringDeserializers,
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 500,
  });
}

async function main() {
  log(`node ${process.version}, brokers ${brokers()}`);
  await createTopic(IN, 2);
  await createTopic(OUT, 1);
  const seed = new Producer({
    clientId: 'probe-g4-seed',
    bootstrapBrokers: brokers(),
    serializers: stringSerializers,
  });
  await seed.send({
    messages: [0, 1].flatMap((p) =>
      Array.from({ length: 6 }, (_, i) => ({
        topic: IN,
        partition: p,
        key: `k${i}`,
        value: `p${p}-${i}`,
      })),
    ),
  });
  await seed.close();

  const C1 = mkConsumer('C1');
  const joins = [];
  C1.on('consumer:group:join', (e) =>
    joins.push(`C1 join gen=${e.generationId} assignments=${fmt(e.assignments)}`),
  );
  const got = { 0: [], 1: [] };
  const s1 = await C1.consume({
    topics: [IN],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
    maxWaitTime: 200,
  });
  s1.on('data', (m) => got[m.partition].push(m));
  for (let i = 0; i < 100 && (got[0].length < 4 || got[1].length < 4); i++) await sleep(100);
  const gen1 = C1.generationId;
  log(
    `C1 memberId=${C1.memberId} generationId=${gen1} got p0=${got[0].length} p1=${got[1].length}; message metadata ${fmt(got[0][0]?.metadata)}`,
  );

  const P = new Producer({
    clientId: 'probe-g4-tx',
    bootstrapBrokers: brokers(),
    idempotent: true,
    transactionalId: `probe-g4-tx-${RUN}`,
    serializers: stringSerializers,
    timeout: 10000,
    producerId: -1n,
    producerEpoch: -1,
  });

  console.log('\n=== 1. TxnOffsetCommit with the current generation ===');
  await P.beginTransaction();
  let tx = P.transaction;
  await attempt('1 addConsumer(C1)', () => tx.addConsumer(C1));
  await attempt(
    `1 addOffset(p0@${got[0][0].offset}, gen ${got[0][0].metadata.consumer.generationId})`,
    () => tx.addOffset(got[0][0]),
  );
  await attempt(
    '1 send OUT',
    async () =>
      (await tx.send({ messages: [{ topic: OUT, partition: 0, key: 'x', value: 'step1' }] }))
        .offsets,
  );
  await attempt('1 commit', () => tx.commit());
  console.log(
    `1 RESULT committed offsets (requireStable) ${fmt(await committed())} ; expected p0=${got[0][0].offset + 1n}`,
  );

  console.log('\n=== 2. gap 2b: two concurrent addOffset calls (p0, p1) ===');
  await P.beginTransaction();
  tx = P.transaction;
  await attempt('2 addConsumer(C1)', () => tx.addConsumer(C1));
  const rs = await Promise.allSettled([tx.addOffset(got[0][1]), tx.addOffset(got[1][1])]);
  rs.forEach((r, i) =>
    r.status === 'fulfilled'
      ? console.log(`2 addOffset[${i}] (p${i}@${got[i][1].offset}): OK`)
      : printError(`2 addOffset[${i}]`, r.reason),
  );
  await attempt(
    '2 send OUT',
    async () =>
      (await tx.send({ messages: [{ topic: OUT, partition: 0, key: 'x', value: 'step2' }] }))
        .offsets,
  );
  await attempt('2 commit', () => tx.commit());
  console.log(
    `2 RESULT committed offsets (requireStable) ${fmt(await committed())} ; expected p0=${got[0][1].offset + 1n} p1=${got[1][1].offset + 1n}`,
  );

  console.log(
    '\n=== 3. a second member joins; addOffset with a message from the old generation ===',
  );
  const C2 = mkConsumer('C2');
  C2.on('consumer:group:join', (e) =>
    joins.push(`C2 join gen=${e.generationId} assignments=${fmt(e.assignments)}`),
  );
  const s2 = await C2.consume({
    topics: [IN],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
    maxWaitTime: 200,
  });
  s2.on('data', () => {});
  for (let i = 0; i < 300 && !(C1.generationId > gen1 && C2.generationId === C1.generationId); i++)
    await sleep(100);
  log(
    `after C2 joined: C1 generationId=${C1.generationId} memberId=${C1.memberId} assignments=${fmt(C1.assignments)} ; C2 generationId=${C2.generationId} assignments=${fmt(C2.assignments)}`,
  );
  for (const j of joins) log(j);
  const old = got[0][2];
  await P.beginTransaction();
  tx = P.transaction;
  await attempt('3 addConsumer(C1)', () => tx.addConsumer(C1));
  const r3 = await attempt(
    `3 addOffset(p0@${old.offset}, OLD gen ${old.metadata.consumer.generationId}, current ${C1.generationId})`,
    () => tx.addOffset(old),
  );
  console.log(
    `3 RESULT old-generation addOffset: ${r3.ok ? 'ACCEPTED (KIP-447 fencing NOT effective)' : 'REFUSED'}`,
  );
  await attempt('3 abort', () => tx.abort());
  console.log(`3 committed offsets now ${fmt(await committed())}`);

  console.log('\n=== 4. control: Message-shaped object with the current generation ===');
  const owned = (C1.assignments ?? []).find((a) => a.topic === IN)?.partitions?.[0];
  if (owned === undefined) {
    console.log('4 SKIPPED: C1 owns no partition of IN');
  } else {
    const cur = {
      topic: IN,
      partition: owned,
      offset: got[owned][3].offset,
      metadata: {
        consumer: {
          groupId: C1.groupId,
          generationId: C1.generationId,
          memberId: C1.memberId,
          coordinatorId: C1.coordinatorId,
        },
      },
    };
    await P.beginTransaction();
    tx = P.transaction;
    await attempt('4 addConsumer(C1)', () => tx.addConsumer(C1));
    const r4 = await attempt(`4 addOffset(p${owned}@${cur.offset}, gen ${C1.generationId})`, () =>
      tx.addOffset(cur),
    );
    await attempt(`4 ${r4.ok ? 'commit' : 'abort'}`, () => (r4.ok ? tx.commit() : tx.abort()));
    console.log(
      `4 RESULT current-generation Message-shaped addOffset: ${r4.ok ? 'ACCEPTED' : 'REFUSED'} ; committed ${fmt(await committed())} ; expected p${owned}=${cur.offset + 1n}`,
    );
    // 4b: a partition C1 no longer owns, with the current generation: the broker does not check ownership
    const notOwned = owned === 0 ? 1 : 0;
    if (!(C1.assignments ?? []).find((a) => a.topic === IN)?.partitions?.includes(notOwned)) {
      const other = { ...cur, partition: notOwned, offset: got[notOwned][3].offset };
      await P.beginTransaction();
      tx = P.transaction;
      await attempt('4b addConsumer(C1)', () => tx.addConsumer(C1));
      const r4b = await attempt(
        `4b addOffset(p${notOwned} NOT owned by C1, gen ${C1.generationId})`,
        () => tx.addOffset(other),
      );
      await attempt('4b abort', () => tx.abort());
      console.log(
        `4b RESULT: ${r4b.ok ? 'ACCEPTED (the broker checks generation+member, not ownership)' : 'REFUSED'}`,
      );
    }
  }

  await P.close().catch(() => {});
  await s1.close().catch(() => {});
  await s2.close().catch(() => {});
  await C1.close(true).catch(() => {});
  await C2.close(true).catch(() => {});
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('probe crashed', e);
    process.exit(2);
  },
);
