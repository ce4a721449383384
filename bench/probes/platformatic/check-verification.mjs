// Prints broker 1's transaction.partition.verification.enable (after gap2 VERIFY_OFF=1 runs).
import { Admin, ConfigResourceTypes } from '@platformatic/kafka';
import { brokers } from './common.mjs';
const admin = new Admin({ clientId: 'probe-check', bootstrapBrokers: brokers() });
const name = 'transaction.partition.verification.enable';
const d = await admin.describeConfigs({
  resources: [
    { resourceType: ConfigResourceTypes.BROKER, resourceName: '1', configurationKeys: [name] },
  ],
  includeSynonyms: true,
});
const c = d[0].configs.find((x) => x.name === name);
console.log(name, '=', c.value, 'source', c.configSource, 'synonyms', JSON.stringify(c.synonyms));
await admin.close();
