// gap12: does @platformatic/kafka use transactions v2 (KIP-890 part 2) where the broker offers it?
// Transaction v2 adds a transaction's partitions with its first Produce (v12) and its offsets with
// TxnOffsetCommit (v5), so a transaction needs no AddPartitionsToTxn and no AddOffsetsToTxn round
// trip, and EndTxn (v5) returns the bumped epoch. The probe compares the broker's highest
// versions (the library's public listApis) with the request versions the library exports.
//   npx node bench/probes/platformatic/gap12-transaction-v2.mjs
import * as kafka from '@platformatic/kafka';
import { brokers, log } from './common.mjs';

/** The Kafka API keys of transaction v2's requests, and the version that carries it. */
const V2 = [
  { name: 'Produce', key: 0, exportPrefix: 'produceV', v2: 12 },
  { name: 'TxnOffsetCommit', key: 28, exportPrefix: 'txnOffsetCommitV', v2: 5 },
  { name: 'EndTxn', key: 26, exportPrefix: 'endTxnV', v2: 5 },
];

/** The highest `<prefix><n>` request module the package exports. */
function libraryHighest(prefix) {
  const versions = Object.keys(kafka)
    .filter((k) => k.startsWith(prefix) && /^\d+$/.test(k.slice(prefix.length)))
    .map((k) => Number(k.slice(prefix.length)));
  return versions.length === 0 ? null : Math.max(...versions);
}

const admin = new kafka.Admin({ clientId: 'probe-gap12', bootstrapBrokers: brokers() });
try {
  const apis = await admin.listApis();
  let missing = 0;
  for (const api of V2) {
    const broker = apis.find((a) => a.apiKey === api.key)?.maxVersion ?? null;
    const library = libraryHighest(api.exportPrefix);
    const lacks = broker !== null && broker >= api.v2 && (library === null || library < api.v2);
    if (lacks) missing++;
    log(
      `${api.name}: broker up to v${broker}, library up to v${library}, transaction v2 needs v${api.v2}` +
        (lacks ? ' (the library lacks it)' : ''),
    );
  }
  log(
    missing === 0
      ? 'RESULT gap12 disproved: the library has every request version of transaction v2'
      : `RESULT gap12 proven: the broker offers transaction v2 and the library lacks ${missing} of its 3 request versions, so each transaction still sends AddPartitionsToTxn and AddOffsetsToTxn`,
  );
} finally {
  await admin.close();
}
