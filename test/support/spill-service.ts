/**
 * A separate "spill service" process for the on-call tests: it does not own any session's
 * sequence, so it answers a spill request with an out-of-band SpillCompleted (seq null,
 * contract §3, §4 step 0). Reads `agent.spill-requests` until one for SPILL_SESSION, stores
 * nothing, reports the range as stored, prints the event it sent, exits. With
 * CG_SIGNING_KEY_FILE it signs the event (contract §4b). A test double of the on-call flow
 * only: signing a range it did not store breaks §4b's rule that a signer vouches for every
 * position (rev 12); a real service is `SpillWorker`, which signs only what it stored and read
 * back (src/client/vouch.ts).
 * Run: node --import tsx test/support/spill-service.ts (env as for `compaction-guard run`).
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { loadConfig } from '../../src/config/config';
import type { SpillCompleted } from '../../src/engine/events';
import { connectionOptions, kafkaClient } from '../../src/kafka/client';
import { kafkajsClient } from '../../src/kafka/kafkajs';
import { RegistryCodec } from '../../src/registry/codec';
import { registerSchemas } from '../../src/registry/register';
import { OutputDecoder } from '../../src/registry/outputDecoder';
import { readTopics } from '../../src/cli/topicReader';
import { expiryFrom, signed } from '../../src/authority/signing';
import { configuredSigningKey } from '../../src/authority/signingKeySource';

async function main(): Promise<void> {
  const session = process.env.SPILL_SESSION;
  if (!session) throw new Error('SPILL_SESSION: required');
  const config = loadConfig(process.env);
  const log = pino({ level: 'error' }, pino.destination(2));
  const key = configuredSigningKey(process.env, {}, null)?.key ?? null;
  const connection = await kafkaClient(config.brokers, 'spill-service', log, config);
  const codec = RegistryCodec.fromConfig(config);
  const decoder = new OutputDecoder(codec.registry);
  let found: (e: SpillCompleted) => void = () => undefined;
  const event = new Promise<SpillCompleted>((resolve) => (found = resolve));
  const reader = await readTopics(connection, [config.spillTopic], {
    fromBeginning: true,
    follow: true,
    groupPrefix: 'spill-service',
    onMessage: async (_t, _p, m) => {
      if (m.key?.toString() !== session || !m.value) return;
      const r = await decoder.decode('spill-request', m.value);
      if (r.record !== 'spill-request') return;
      const event: SpillCompleted = {
        type: 'SpillCompleted',
        sessionId: session,
        seq: null,
        eventId: randomUUID(),
        occurredAt: Date.now(),
        spillRequestId: r.value.spillRequestId,
        handle: `s3://spills/${encodeURIComponent(r.value.spillRequestId)}`,
        unit: r.value.unit,
        range: r.value.range,
        signature: null,
      };
      found(key === null ? event : signed(event, key, expiryFrom(Date.now(), r.value.requestedAt)));
    },
  });
  const e = await event;
  await reader.stop();
  await registerSchemas(codec, config.registryUrl);
  const kafka = kafkajsClient(connectionOptions(config.brokers, 'spill-service', log, config));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic: config.inputTopic,
    acks: -1,
    messages: [{ key: session, value: codec.encodeEvent(e) }],
  });
  await producer.disconnect();
  codec.close();
  process.stdout.write(JSON.stringify(e) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`spill-service: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
