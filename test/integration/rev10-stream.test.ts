/**
 * Out-of-band events through Kafka: a large generated stream with out-of-band spill answers and
 * acknowledgements (and their redeliveries), JSON that repeats a key and lines that are not
 * valid UTF-8, produced as records (valid events half as Avro, half as JSON) to the real broker.
 * The processor's read_committed outputs must equal the offline `audit` of the same bytes, and
 * its dead letters must be the offline dead letters, code for code.
 */
import { PassThrough, Readable } from 'node:stream';
import type { Message } from 'kafkajs';
import { runAudit } from '../../src/cli/audit';
import type { AuditLineRecord } from '../../src/audit/replay';
import { registerSchemas } from '../../src/registry/register';
import { rev10Stream } from '../support/rev10Stream';
import {
  codecFor,
  decodeOutput,
  readTopics,
  start,
  testConfig,
  verdictMap,
  kafka,
} from './pipeline';

jest.setTimeout(300_000);

async function offlineOf(bytes: Buffer): Promise<AuditLineRecord[]> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await runAudit([{ name: 'stream', stream: Readable.from([bytes]) }], out, { json: true });
  return Buffer.concat(chunks)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditLineRecord);
}

/** Audit records as a sorted list (their order across sessions differs by partition). */
function auditsOf(records: readonly AuditLineRecord[]): string[] {
  return records
    .filter((r) => r.record === 'audit')
    .map((r) => JSON.stringify(r))
    .sort();
}

function spillsOf(records: readonly AuditLineRecord[]): string[] {
  return records
    .filter((r) => r.record === 'spill-request')
    .map((r) => JSON.stringify(r))
    .sort();
}

describe('out-of-band stream: processor = offline audit', () => {
  it('out-of-band events, their redeliveries, repeated keys and bad UTF-8 decide alike through Kafka and offline', async () => {
    const { lines, counts } = rev10Stream(2026, 80, 12_000);
    expect(counts.outOfBand).toBeGreaterThan(20);
    expect(counts.outOfBandRedeliveries).toBeGreaterThan(5);
    expect(counts.duplicateKeys).toBeGreaterThan(20);
    expect(counts.badUtf8).toBeGreaterThan(20);

    const expected = await offlineOf(
      Buffer.concat(lines.flatMap((l) => [l.bytes, Buffer.from('\n')])),
    );
    const deadOffline = expected.filter((r) => r.record === 'dead-letter');
    const outputs = expected.filter((r) => r.record !== 'dead-letter');
    expect(
      expected.filter((r) => r.record === 'audit' && r.inputSeq === null).length,
    ).toBeGreaterThan(0);

    const c = testConfig();
    const codec = codecFor(c);
    await registerSchemas(codec, c.registryUrl);
    const running = await start(c);
    try {
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        const messages: Message[] = lines.map((l, i) => ({
          key: l.sessionId,
          value: l.event !== null && i % 2 === 0 ? codec.encodeEvent(l.event) : l.bytes,
        }));
        for (let i = 0; i < messages.length; i += 500) {
          await producer.send({
            topic: c.inputTopic,
            acks: -1,
            messages: messages.slice(i, i + 500),
          });
        }
      } finally {
        await producer.disconnect();
      }
      const total = outputs.length + deadOffline.length;
      const got = await readTopics(
        [c.verdictTopic, c.spillTopic, c.auditTopic, c.dlqTopic],
        (rs) => rs.length >= total,
        180_000,
      );
      const dead = got.filter((r) => r.topic === c.dlqTopic);
      const decoded = got.filter((r) => r.topic !== c.dlqTopic).map((r) => decodeOutput(c, r));
      expect(decoded).toHaveLength(outputs.length);
      expect(verdictMap(decoded)).toEqual(verdictMap(outputs));
      expect(auditsOf(decoded)).toEqual(auditsOf(outputs));
      expect(spillsOf(decoded)).toEqual(spillsOf(outputs));
      const codes = (xs: string[]) => xs.sort();
      expect(codes(dead.map((d) => d.headers['cg.error.code']!))).toEqual(
        codes(deadOffline.map((d) => String((d as { error: string }).error).split(':')[0]!)),
      );
      expect(dead.length).toBe(counts.duplicateKeys + counts.badUtf8);
    } finally {
      await running.stop();
      codec.close();
    }
  });
});
