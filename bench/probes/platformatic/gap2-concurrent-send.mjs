// Gap 2: two concurrent transaction.send() calls on one transaction share the first call's
// AddPartitionsToTxn (kPerformDeduplicated keyed by operation name), so the second call's
// partition is never added to the transaction.
// Cases (each its own topic with 2 partitions, its own fresh transactionalId):
//   seq   : send p0, then send p1 (sequential), commit            -> control
//   conc  : send p0 || send p1 (concurrent), commit
//   concabort : send p0 || send p1 (concurrent), abort (are p1's records aborted or left hanging?)
//   conccommit: send p0 || send p1 (concurrent), commit even if a send failed (what does commit say?)
// VERIFY_OFF=1: first set the cluster-wide dynamic broker config
// transaction.partition.verification.enable=false on broker 1 (KIP-890 part 1 off, as on brokers < 3.6), and
// restore it (DELETE the override) at the end.
// After each: HW and LSO per partition, and kafkajs read_committed / read_uncommitted counts.
import {
  Admin,
  Producer,
  stringSerializers,
  ConfigResourceTypes,
  IncrementalAlterConfigOperationTypes,
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
  printError,
} from './common.mjs';

const WORKAROUND = { producerId: -1n, producerEpoch: -1 };
const N = 5; // records per send

function mk(transactionalId) {
  return new Producer({
    clientId: 'probe-g2',
    bootstrapBrokers: brokers(),
    idempotent: true,
    transactionalId,
    serializers: stringSerializers,
    timeout: 10000,
    ...WORKAROUND,
  });
}

const msgs = (topic, partition, tag) =>
  Array.from({ length: N }, (_, i) => ({
    topic,
    partition,
    key: `${tag}-${i}`,
    value: `${tag}-p${partition}-${i}`,
  }));

async function runCase(name, body) {
  const topic = `probe-g2-${name}-${RUN}`;
  await createTopic(topic, 2);
  const p = mk(`probe-g2-${name}-${RUN}`);
  console.log(`\n=== case ${name} (topic ${topic}) ===`);
  const begin = await attempt(`${name} beginTransaction`, async () => {
    await p.beginTransaction();
    return `producerId=${p.producerId} epoch=${p.producerEpoch}`;
  });
  if (!begin.ok) {
    await p.close();
    return;
  }
  const tx = p.transaction;
  let failed = await body(tx, topic);
  if (failed === 'commit-anyway') {
    await attempt(`${name} commit (despite a failed send)`, () => tx.commit());
  } else if (failed) {
    await attempt(`${name} abort`, () => tx.abort());
  } else {
    await attempt(`${name} commit`, () => tx.commit());
  }
  await p.close().catch((e) => printError(`${name} close`, e));
  // Give markers a moment, then look.
  await new Promise((r) => setTimeout(r, 500));
  console.log(`${name} offsets`, fmt(await offsets(topic, 2)));
  const rc = await readWithKafkajs(topic, { readUncommitted: false, idleMs: 3000 });
  const ru = await readWithKafkajs(topic, { readUncommitted: true, idleMs: 3000 });
  console.log(
    `${name} RESULT read_committed counts ${fmt(rc)} ; read_uncommitted counts ${fmt(ru)} ; expected ${fmt(expected[name])}`,
  );
}

const expected = {
  seq: { 'p0:all': N, 'p1:all': N },
  conc: { 'p0:all': N, 'p1:all': N },
  concabort: { read_committed: 'nothing', read_uncommitted: { 'p0:all': N, 'p1:all': N } },
  conccommit: { 'p0:all': N, 'p1:all': N },
};

async function settle(label, promises) {
  const rs = await Promise.allSettled(promises);
  let failed = false;
  rs.forEach((r, i) => {
    if (r.status === 'fulfilled') console.log(`${label}[${i}]: OK ${fmt(r.value.offsets)}`);
    else {
      failed = true;
      printError(`${label}[${i}]`, r.reason);
    }
  });
  return failed;
}

async function setVerification(on) {
  const admin = new Admin({ clientId: 'probe-g2-admin', bootstrapBrokers: brokers() });
  try {
    const name = 'transaction.partition.verification.enable';
    await admin.incrementalAlterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.BROKER,
          resourceName: '1',
          configs: on
            ? [{ name, configOperation: IncrementalAlterConfigOperationTypes.DELETE }]
            : [{ name, configOperation: IncrementalAlterConfigOperationTypes.SET, value: 'false' }],
        },
      ],
    });
    await new Promise((r) => setTimeout(r, 1500)); // dynamic configs propagate through the metadata log
    const d = await admin.describeConfigs({
      resources: [
        { resourceType: ConfigResourceTypes.BROKER, resourceName: '1', configurationKeys: [name] },
      ],
    });
    log(`broker 1 ${name} = ${fmt(d[0]?.configs?.find((c) => c.name === name)?.value)}`);
  } finally {
    await admin.close();
  }
}

async function main() {
  log(`node ${process.version}, brokers ${brokers()}`);
  const verifyOff = process.env.VERIFY_OFF === '1';
  if (verifyOff) {
    await setVerification(false);
    await new Promise((r) => setTimeout(r, 2000));
  }
  try {
    await cases();
  } finally {
    if (verifyOff) await setVerification(true);
  }
}

async function cases() {
  await runCase('seq', async (tx, topic) => {
    let f = await settle('seq send p0', [tx.send({ messages: msgs(topic, 0, 'a') })]);
    f = (await settle('seq send p1', [tx.send({ messages: msgs(topic, 1, 'b') })])) || f;
    return f;
  });
  await runCase('conc', async (tx, topic) =>
    settle('conc send p0||p1', [
      tx.send({ messages: msgs(topic, 0, 'a') }),
      tx.send({ messages: msgs(topic, 1, 'b') }),
    ]),
  );
  await runCase('concabort', async (tx, topic) => {
    await settle('concabort send p0||p1', [
      tx.send({ messages: msgs(topic, 0, 'a') }),
      tx.send({ messages: msgs(topic, 1, 'b') }),
    ]);
    return true; // always abort: are p1's records aborted too, or left hanging?
  });
  await runCase('conccommit', async (tx, topic) => {
    await settle('conccommit send p0||p1', [
      tx.send({ messages: msgs(topic, 0, 'a') }),
      tx.send({ messages: msgs(topic, 1, 'b') }),
    ]);
    return 'commit-anyway';
  });
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error('probe crashed', e);
    process.exit(2);
  },
);
