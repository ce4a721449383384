// Gap 1: InitProducerId sends (0, 0) instead of (-1, -1) unless told otherwise.
// A. producer A (transactionalId T) commits a transaction and closes; producer B (same T, default
//    options) begins + sends + commits: does it work?
// B. producer C (same T, producerId: -1n, producerEpoch: -1): does it work? and once more (D).
// C. zombie fencing, idle: Z1 (T2) commits; Z2 (T2) inits and commits; Z1 runs another transaction.
// D. zombie fencing, in flight: Y1 (T3) begins + sends (open); Y2 (T3) inits, sends, commits;
//    Y1 commits.
// E. the (0,0) default on a transactionalId whose current producer id IS held by a live producer:
//    which error does the broker give at init time (repeats A with the old producer still open).
import { Producer, stringSerializers } from '@platformatic/kafka';
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

const topic = `probe-g1-${RUN}`;
const WORKAROUND = { producerId: -1n, producerEpoch: -1 };

function mk(name, transactionalId, extra = {}) {
  const p = new Producer({
    clientId: `probe-g1-${name}`,
    bootstrapBrokers: brokers(),
    idempotent: true,
    transactionalId,
    serializers: stringSerializers,
    timeout: 10000,
    ...extra,
  });
  p.probeName = name;
  return p;
}

const ids = (p) => `producerId=${p.producerId} producerEpoch=${p.producerEpoch}`;

async function oneTxn(p, label, { commit = true } = {}) {
  const begin = await attempt(`${label} beginTransaction (${p.probeName})`, async () => {
    await p.beginTransaction();
    return ids(p);
  });
  if (!begin.ok) return false;
  const tx = p.transaction;
  const sent = await attempt(
    `${label} send (${p.probeName})`,
    async () =>
      (
        await tx.send({
          messages: [{ topic, key: label, value: `${label}:${p.probeName}`, partition: 0 }],
        })
      ).offsets,
  );
  if (!sent.ok) {
    await attempt(`${label} abort after failed send (${p.probeName})`, () => tx.abort());
    return false;
  }
  if (!commit) return tx;
  const c = await attempt(`${label} commit (${p.probeName})`, async () => {
    await tx.commit();
    return ids(p);
  });
  return c.ok;
}

async function main() {
  log(`node ${process.version}, brokers ${brokers()}, topic ${topic}`);
  await createTopic(topic, 1);
  const T = `probe-g1-t1-${RUN}`;
  const T2 = `probe-g1-t2-${RUN}`;
  const T3 = `probe-g1-t3-${RUN}`;
  const T4 = `probe-g1-t4-${RUN}`;

  console.log(`\n=== A. restart with default options (transactionalId ${T}) ===`);
  const A = mk('A-default', T);
  await oneTxn(A, 'A1');
  await A.close();
  const B = mk('B-default-restart', T);
  const bOk = await oneTxn(B, 'B1');
  console.log(
    `RESULT A: restart of an existing transactionalId with default options: ${bOk ? 'WORKS' : 'FAILS'}`,
  );
  await B.close().catch(() => {});

  console.log(
    `\n=== B. restart with producerId: -1n, producerEpoch: -1 (same transactionalId ${T}) ===`,
  );
  const C = mk('C-minus1', T, WORKAROUND);
  const cOk = await oneTxn(C, 'C1');
  const cOk2 = cOk && (await oneTxn(C, 'C2'));
  await C.close();
  const D = mk('D-minus1-again', T, WORKAROUND);
  const dOk = await oneTxn(D, 'D1');
  await D.close();
  console.log(
    `RESULT B: restart with (-1,-1): first ${cOk ? 'WORKS' : 'FAILS'}, second txn same producer ${cOk2 ? 'WORKS' : 'FAILS'}, another restart ${dOk ? 'WORKS' : 'FAILS'}`,
  );

  console.log(
    `\n=== C. zombie fencing, idle zombie (transactionalId ${T2}, both with (-1,-1)) ===`,
  );
  const Z1 = mk('Z1-old', T2, WORKAROUND);
  await oneTxn(Z1, 'Z1a');
  const Z2 = mk('Z2-new', T2, WORKAROUND);
  await oneTxn(Z2, 'Z2a');
  const z1Again = await oneTxn(Z1, 'Z1b');
  console.log(`RESULT C: old producer after new init: ${z1Again ? 'NOT FENCED (bad)' : 'FENCED'}`);
  await attempt('Z1 beginTransaction once more after the failure (state check)', async () => {
    await Z1.beginTransaction();
    return ids(Z1);
  });
  await Z1.close().catch(() => {});
  await Z2.close();

  console.log(
    `\n=== D. zombie fencing, zombie with an open transaction (transactionalId ${T3}, both with (-1,-1)) ===`,
  );
  const Y1 = mk('Y1-old', T3, WORKAROUND);
  const y1tx = await oneTxn(Y1, 'Y1a', { commit: false });
  log(`Y1 transaction open: ${Boolean(y1tx)} (${ids(Y1)})`);
  const Y2 = mk('Y2-new', T3, WORKAROUND);
  await oneTxn(Y2, 'Y2a');
  if (y1tx) {
    const r = await attempt('Y1a commit after Y2 init (zombie)', async () => {
      await y1tx.commit();
      return ids(Y1);
    });
    console.log(`RESULT D: zombie commit: ${r.ok ? 'NOT FENCED (bad)' : 'FENCED'}`);
  }
  await Y1.close().catch(() => {});
  await Y2.close();

  console.log(
    `\n=== E. default options while the previous producer is still alive (transactionalId ${T4}) ===`,
  );
  const X1 = mk('X1-default', T4);
  await oneTxn(X1, 'X1a');
  const X2 = mk('X2-default', T4);
  const x2 = await oneTxn(X2, 'X2a');
  console.log(`RESULT E: second producer with default options: ${x2 ? 'WORKS' : 'FAILS'}`);
  const x1 = await oneTxn(X1, 'X1b');
  console.log(`RESULT E: first producer's next transaction: ${x1 ? 'WORKS' : 'FAILS'}`);
  await X1.close().catch(() => {});
  await X2.close().catch(() => {});

  console.log('\n=== topic state ===');
  console.log('offsets', fmt(await offsets(topic, 1)));
  const rc = await readWithKafkajs(topic, { readUncommitted: false, classify: (v) => v });
  console.log('read_committed (kafkajs) records by value:', fmt(rc));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('probe crashed', e);
    process.exit(2);
  },
);
