// Decision 242's replay, on a 3-node loopback cluster of its own (`npm run build` first): an
// aborted transaction while a follower is down, the producer replaced (same producer id, a
// higher epoch), transactions committed after; the follower back, then made the leader; the
// partition read read_committed through the transport's reader and through kafkajs, against
// what was committed. Prints a RESULT line.
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import { URL, fileURLToPath } from 'node:url';
const root = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(`${root}package.json`);
const { startLocalKafkaCluster } = require(`${root}dist/services/localCluster.js`);
const { DEFAULT_KAFKA_VERSION, cacheDir } = require(`${root}dist/services/maven.js`);
const { platformaticTransactionalProducer } = require(
  `${root}dist/kafka/platformatic/transactionalProducer.js`,
);
const { platformaticPartitionReader } = require(
  `${root}dist/kafka/platformatic/partitionReader.js`,
);
const { Kafka, logLevel } = require('kafkajs');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(new Date().toISOString().slice(11, 23), ...a);

const cluster = await startLocalKafkaCluster({
  cacheDir: cacheDir(),
  version: DEFAULT_KAFKA_VERSION,
  startTimeoutMs: 240000,
  network: 'loopback',
});
const kafka = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING });
const base = { clientId: 'exp', bootstrapBrokers: cluster.brokers };
const topic = 'exp-' + Date.now();
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({
  topics: [
    {
      topic,
      numPartitions: 1,
      replicationFactor: 3,
      configEntries: [{ name: 'min.insync.replicas', value: '2' }],
    },
  ],
  waitForLeaders: true,
});
const meta = async () =>
  (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions[0];
const m0 = await meta();
log('leader', m0.leader, 'replicas', m0.replicas, 'isr', m0.isr);
const txnId = 'exp-txn';
const mk = () =>
  platformaticTransactionalProducer(
    base,
    { transactionalId: txnId, transactionTimeoutMs: 5000, retryMs: 100 },
    () => undefined,
  );
const expected = [];
let n = 0;
async function txn(p, count, commit) {
  const t = await p.transaction();
  const messages = [];
  for (let i = 0; i < count; i++)
    messages.push({
      key: Buffer.from('k' + (n % 7)),
      value: Buffer.from(`v${n++}-${commit ? 'C' : 'A'}`),
      partition: 0,
    });
  await t.send([{ topic, messages }]);
  if (commit) {
    await t.commit();
    expected.push(...messages.map((m) => m.value.toString()));
  } else await t.abort();
}
let p0 = mk();
await p0.connect();
for (let i = 0; i < 5; i++) await txn(p0, 3, true);
const follower = m0.replicas.find((r) => r !== m0.leader);
log('kill follower', follower);
await cluster.node(follower).kill();
await txn(p0, 3, false);
await p0.disconnect();
const p1 = mk();
await p1.connect();
for (let i = 0; i < 10; i++) await txn(p1, 3, true);
log('restart follower');
await cluster.node(follower).start();
await cluster.waitHealthy([topic], 120000);
for (let i = 0; i < 3; i++) await txn(p1, 3, true);
log('isr now', (await meta()).isr);
// Make the follower the leader: kill the leader, then the third if the follower is not it.
log('kill leader', m0.leader);
await cluster.node(m0.leader).kill();
for (let i = 0; i < 60; i++) {
  await sleep(1000);
  try {
    const m = await meta();
    if (m.leader !== m0.leader && m.leader >= 0) {
      log('new leader', m.leader, 'isr', m.isr);
      break;
    }
  } catch {
    // No metadata while the controller moves the leadership: asked again.
  }
}
let m1 = await meta();
if (m1.leader !== follower) {
  log('restart old leader, kill', m1.leader, 'to move leadership to', follower);
  await cluster.node(m0.leader).start();
  await cluster.waitHealthy([topic], 120000);
  await cluster.node(m1.leader).kill();
  for (let i = 0; i < 60; i++) {
    await sleep(1000);
    const m = await meta();
    if (m.leader !== m1.leader && m.leader >= 0) {
      log('new leader', m.leader);
      break;
    }
  }
}
m1 = await meta();
log('leader now', m1.leader, 'follower was', follower);

async function readPlat() {
  const got = [];
  const r = platformaticPartitionReader(base, {
    groupId: 'exp-r-' + Date.now(),
    topic,
    maxBytesPerPartition: 1 << 20,
    maxBytes: 1 << 24,
    maxWaitMs: 100,
    partitionsConcurrently: 1,
  });
  let last = Date.now();
  await r.start(async (b) => {
    last = Date.now();
    for (const m of b.messages) got.push(m.value.toString());
  });
  while (Date.now() - last < 4000) await sleep(250);
  await r.stop();
  return got;
}
async function readKjs(uncommitted) {
  const got = [];
  const c = kafka.consumer({ groupId: 'exp-k-' + Date.now(), readUncommitted: uncommitted });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  let last = Date.now();
  await c.run({
    eachMessage: async ({ message }) => {
      last = Date.now();
      got.push(message.value.toString());
    },
  });
  while (Date.now() - last < 4000) await sleep(250);
  await c.disconnect();
  return got;
}
const plat = await readPlat();
const kc = await readKjs(false);
const ku = await readKjs(true);
const same = (a) => JSON.stringify(a) === JSON.stringify(expected);
console.log(
  `RESULT committed ${expected.length}, read by the platformatic reader ${plat.length} (${same(plat) ? 'all, in order' : 'NOT the same'}), by kafkajs read_committed ${kc.length} (${same(kc) ? 'all, in order' : 'NOT the same'}), read_uncommitted ${ku.length}`,
);
if (!same(plat))
  log(
    'platformatic missing',
    expected.filter((v) => !plat.includes(v)).slice(0, 10),
    'extra',
    plat.filter((v) => !expected.includes(v)).slice(0, 10),
  );
await admin.disconnect();
await p1.disconnect();
await cluster.stop();
process.exit(0);
