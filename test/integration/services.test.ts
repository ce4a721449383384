/**
 * Proves the provided services are real and that our client libraries speak their protocols:
 * kafkajs 2.2.4 (transactions, sendOffsets, read_committed, compacted topics) against the
 * broker, and @kafkajs/confluent-schema-registry against Apicurio's ccompat API.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { ConfigResourceTypes, Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { serviceEnv } from './env';

const { brokers, registryUrl } = serviceEnv();
const run = `${Date.now().toString(36)}-${process.pid}`;
// Failures reach the tests as rejections. kafkajs would also log, as errors, the retries it
// makes by design, e.g. CONCURRENT_TRANSACTIONS right after a commit while the broker is still
// writing the transaction markers; that is expected noise, so the client stays quiet.
const kafka = new Kafka({ clientId: `services-test-${run}`, brokers, logLevel: logLevel.NOTHING });

/** Consumes `topic` from the beginning until `done(values)` holds, with eachBatch. */
async function consumeUntil(
  topic: string,
  readUncommitted: boolean,
  done: (values: string[]) => boolean,
  timeoutMs = 30_000,
): Promise<string[]> {
  const consumer: Consumer = kafka.consumer({
    groupId: `reader-${readUncommitted ? 'uncommitted' : 'committed'}-${run}`,
    readUncommitted,
  });
  const values: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`saw only ${JSON.stringify(values)} on ${topic}`)),
        timeoutMs,
      );
      void consumer.run({
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          for (const message of batch.messages) {
            values.push(message.value?.toString() ?? '<null>');
            resolveOffset(message.offset);
          }
          await heartbeat();
          if (done(values)) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    return values;
  } finally {
    await consumer.disconnect();
  }
}

describe('Kafka broker with kafkajs', () => {
  const input = `input-${run}`;
  const output = `output-${run}`;
  const compacted = `compacted-${run}`;
  const group = `processor-${run}`;
  let admin: Admin;

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  test('admin creates topics, including one with cleanup.policy=compact', async () => {
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: input, numPartitions: 2 },
        { topic: output, numPartitions: 1 },
        {
          topic: compacted,
          numPartitions: 1,
          configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
    });
    expect(created).toBe(true);
    expect(await admin.listTopics()).toEqual(expect.arrayContaining([input, output, compacted]));
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: compacted, configNames: ['cleanup.policy'] },
      ],
    });
    const policy = described.resources[0]?.configEntries.find(
      (e) => e.configName === 'cleanup.policy',
    );
    expect(policy?.configValue).toBe('compact');
  });

  test('transactional producer commits records and consumer offsets (sendOffsets) atomically', async () => {
    const plain = kafka.producer();
    await plain.connect();
    await plain.send({
      topic: input,
      messages: [
        { key: 'a', value: 'in-1', partition: 0 },
        { key: 'b', value: 'in-2', partition: 0 },
        { key: 'c', value: 'in-3', partition: 0 },
      ],
    });
    await plain.disconnect();

    const producer = kafka.producer({
      transactionalId: `tx-${run}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const committed = await producer.transaction();
      await committed.send({ topic: output, messages: [{ key: 'k', value: 'committed-1' }] });
      await committed.sendOffsets({
        consumerGroupId: group,
        topics: [{ topic: input, partitions: [{ partition: 0, offset: '3' }] }],
      });
      await committed.commit();

      const aborted = await producer.transaction();
      await aborted.send({ topic: output, messages: [{ key: 'k', value: 'aborted' }] });
      await aborted.sendOffsets({
        consumerGroupId: group,
        topics: [{ topic: input, partitions: [{ partition: 1, offset: '99' }] }],
      });
      await aborted.abort();

      const last = await producer.transaction();
      await last.send({ topic: output, messages: [{ key: 'k', value: 'committed-2' }] });
      await last.commit();
    } finally {
      await producer.disconnect();
    }

    const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [input] });
    const byPartition = Object.fromEntries(
      (offsets?.partitions ?? []).map((p) => [p.partition, p.offset]),
    );
    expect(byPartition).toEqual({ 0: '3', 1: '-1' }); // the aborted offset commit is not there
  });

  test('read_committed consumer (eachBatch) sees committed records only, never the aborted one', async () => {
    const values = await consumeUntil(output, false, (v) => v.includes('committed-2'));
    expect(values).toEqual(['committed-1', 'committed-2']);
  });

  test('read_uncommitted consumer does see the aborted record (so the filtering is real)', async () => {
    const values = await consumeUntil(output, true, (v) => v.includes('committed-2'));
    expect(values).toEqual(['committed-1', 'aborted', 'committed-2']);
  });
});

describe('Schema registry through the Confluent-compatible API', () => {
  const subject = `events-${run}-value`; // TopicNameStrategy: <topic>-value
  const v1 = {
    type: 'record',
    name: 'Event',
    namespace: 'compactionguard.test',
    fields: [{ name: 'id', type: 'string' }],
  };
  const v2 = { ...v1, fields: [...v1.fields, { name: 'tokens', type: 'int', default: 0 }] };
  const incompatible = { ...v1, fields: [{ name: 'id', type: 'int' }] };
  const avro = (schema: object) => ({
    type: SchemaType.AVRO as const,
    schema: JSON.stringify(schema),
  });

  test('register under a subject with BACKWARD compatibility, then encode/decode roundtrip', async () => {
    const registry = new SchemaRegistry({ host: registryUrl });
    const { id } = await registry.register(avro(v1), {
      subject,
      compatibility: COMPATIBILITY.BACKWARD,
    });

    // PUT /config/{subject} directly too: this is what deployment tooling would call.
    const put = await fetch(`${registryUrl}/config/${subject}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ compatibility: 'BACKWARD' }),
    });
    expect(put.status).toBe(200);
    const config = (await (await fetch(`${registryUrl}/config/${subject}`)).json()) as {
      compatibilityLevel: string;
    };
    expect(config.compatibilityLevel).toBe('BACKWARD');

    expect(await registry.getLatestSchemaId(subject)).toBe(id);
    const encoded = await registry.encode(id, { id: 'evt-1' });
    expect(encoded[0]).toBe(0); // Confluent wire format: magic byte, then the 4-byte schema id
    expect(encoded.readInt32BE(1)).toBe(id);
    // A fresh client has no cache: decoding fetches the schema by id from the registry.
    expect(await new SchemaRegistry({ host: registryUrl }).decode(encoded)).toEqual({
      id: 'evt-1',
    });
  });

  test('BACKWARD compatibility accepts an added defaulted field and rejects a type change', async () => {
    const registry = new SchemaRegistry({ host: registryUrl });
    const { id: v2Id } = await registry.register(avro(v2), { subject });
    expect(await registry.getLatestSchemaId(subject)).toBe(v2Id);
    await expect(registry.register(avro(incompatible), { subject })).rejects.toThrow(
      /incompatible/i,
    );
    expect(await registry.getLatestSchemaId(subject)).toBe(v2Id);
  });
});
