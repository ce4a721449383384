/**
 * contract §6 (rev 12): a record not on the partition its key maps to is a WRONG_PARTITION dead
 * letter, before its value is read (docs/decisions.md 145); a key must be its sessionId's UTF-8
 * bytes, and only then is a malformed request answered (decisions 146).
 */
import { decodeForBatch } from '../../src/kafka/batch/decoder';
import { BatchPlanner } from '../../src/kafka/batch/planner';
import { MAX_HEADER_TEXT_BYTES } from '../../src/kafka/boundedText';
import { keyPartition } from '../../src/kafka/murmur2';
import { decodeRecordNow, type InputRoute, type RawRecord } from '../../src/kafka/records';
import type { RegistryCodec } from '../../src/registry/codec';
import { SAMPLES, withFields } from './schema-fixtures';
import { PLAN_CONFIG, planContext } from '../support/planContext';

const PARTITIONS = 6;
const SESSION = 'session-1'; // the samples' sessionId
const HOME = keyPartition(SESSION, PARTITIONS);
const AWAY = (HOME + 1) % PARTITIONS;
const at = (partition: number): InputRoute => ({ partition, partitions: PARTITIONS });

const request = SAMPLES.CompactionRequested.minimal;
const malformedRequest = withFields('CompactionRequested', { unit: 'LINES' }); // answerable
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const rec = (key: Buffer | null, value: Buffer | null, offset = '7'): RawRecord => ({
  key,
  value,
  offset,
});
const noCodec = {} as RegistryCodec; // never called: the checks come before the registry

describe('WRONG_PARTITION: a record on another partition than its key maps to', () => {
  it('dead-letters a valid request on another partition, naming both partitions, unanswered', () => {
    const d = decodeRecordNow(rec(Buffer.from(SESSION), json(request)), 'json', at(AWAY));
    expect(d).toEqual({
      ok: false,
      code: 'WRONG_PARTITION',
      message: expect.stringContaining(
        `maps to partition ${HOME} of ${PARTITIONS} (Kafka's default partitioner: murmur2 of the key), but the record is on partition ${AWAY}`,
      ),
      answer: null,
    });
    expect(d && !d.ok && d.message).toContain('"session-1"');
  });

  it('decodes the same record on the partition its key maps to', () => {
    const d = decodeRecordNow(rec(Buffer.from(SESSION), json(request)), 'json', at(HOME));
    expect(d).toMatchObject({
      ok: true,
      input: { type: 'CompactionRequested', sessionId: SESSION },
    });
  });

  it('does not answer a malformed request on another partition (an answer would step a second state)', () => {
    // On its own partition the same record is answered (contract §3: the one exception).
    const home = decodeRecordNow(
      rec(Buffer.from(SESSION), json(malformedRequest)),
      'json',
      at(HOME),
    );
    expect(home).toMatchObject({
      ok: false,
      code: 'BAD_ENUM',
      answer: { type: 'MalformedRequest' },
    });
    const away = decodeRecordNow(
      rec(Buffer.from(SESSION), json(malformedRequest)),
      'json',
      at(AWAY),
    );
    expect(away).toMatchObject({ ok: false, code: 'WRONG_PARTITION', answer: null });
  });

  it('is decided before the value is read: an Avro record needs no registry, malformed JSON is not parsed', () => {
    const avro = Buffer.from([0, 0, 0, 0, 1, 2, 3]);
    expect(decodeRecordNow(rec(Buffer.from(SESSION), avro), 'avro', at(AWAY))).toMatchObject({
      code: 'WRONG_PARTITION',
    });
    expect(decodeRecordNow(rec(Buffer.from(SESSION), avro), 'avro', at(HOME))).toBeUndefined();
    const notJson = Buffer.from('{"type": ');
    expect(decodeRecordNow(rec(Buffer.from(SESSION), notJson), 'json', at(AWAY))).toMatchObject({
      code: 'WRONG_PARTITION',
    });
  });

  it('comes after EMPTY_VALUE (a tombstone starts no state wherever it is)', () => {
    expect(decodeRecordNow(rec(Buffer.from(SESSION), null), 'json', at(AWAY))).toMatchObject({
      code: 'EMPTY_VALUE',
    });
  });

  it('takes the key a mismatched record carries: a key mapping elsewhere is WRONG_PARTITION, one mapping here KEY_MISMATCH', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `other-${i}`);
    const here = keys.find((k) => keyPartition(k, PARTITIONS) === AWAY)!;
    const elsewhere = keys.find((k) => keyPartition(k, PARTITIONS) !== AWAY)!;
    expect(
      decodeRecordNow(rec(Buffer.from(elsewhere), json(request)), 'json', at(AWAY)),
    ).toMatchObject({
      code: 'WRONG_PARTITION',
    });
    expect(decodeRecordNow(rec(Buffer.from(here), json(request)), 'json', at(AWAY))).toMatchObject({
      code: 'KEY_MISMATCH',
    });
  });

  it('quotes a 1 MB key by its first 200 characters and its length in bytes: the message stays bounded', () => {
    const key = Buffer.alloc(1_000_000, 0x6b);
    const route = at((keyPartition(key, PARTITIONS) + 1) % PARTITIONS);
    const d = decodeRecordNow(rec(key, json(request)), 'json', route);
    expect(d).toMatchObject({ ok: false, code: 'WRONG_PARTITION' });
    const message = (d as { message: string }).message;
    expect(message).toContain(`"${'k'.repeat(200)}"… (1000000 bytes)`);
    expect(Buffer.byteLength(message)).toBeLessThan(MAX_HEADER_TEXT_BYTES);
  });

  it('in a batch: the misrouted request is a dead letter with no verdict, the one on its partition gets one', () => {
    const misrouted = rec(Buffer.from(SESSION), json(request), '10');
    const planner = new BatchPlanner({ topic: 'in', partition: AWAY }, planContext());
    planner.add(misrouted, decodeForBatch(misrouted, 'json', noCodec, at(AWAY)) as never);
    const plan = planner.finish('11');
    expect(plan.sends.get(PLAN_CONFIG.verdictTopic)).toBeUndefined();
    expect(plan.overlay.size).toBe(0); // no state started
    const [letter] = plan.sends.get(PLAN_CONFIG.dlqTopic)!;
    expect(letter!.headers).toMatchObject({
      'cg.error.code': 'WRONG_PARTITION',
      'cg.source.partition': String(AWAY),
      'cg.source.offset': '10',
    });
    expect(letter!.key).toEqual(misrouted.key);
    expect(letter!.value).toEqual(misrouted.value);

    const homed = rec(Buffer.from(SESSION), json(request), '10');
    const good = new BatchPlanner({ topic: 'in', partition: HOME }, planContext());
    good.add(homed, decodeForBatch(homed, 'json', noCodec, at(HOME)) as never);
    const verdicts = good.finish('11').sends.get(PLAN_CONFIG.verdictTopic);
    expect(verdicts).toHaveLength(1);
  });
});

describe('the key must be the sessionId, byte for byte (decisions 146)', () => {
  it('a null key is not checked for its partition, and is KEY_MISMATCH once the value is read', () => {
    for (const partition of [HOME, AWAY])
      expect(decodeRecordNow(rec(null, json(request)), 'json', at(partition))).toMatchObject({
        ok: false,
        code: 'KEY_MISMATCH',
        message: 'record key null is not the event\'s sessionId "session-1"',
        answer: null,
      });
  });

  it('a malformed request with a null key or another key keeps its code and is not answered', () => {
    for (const key of [null, Buffer.from('someone-else')]) {
      const d = decodeRecordNow(rec(key, json(malformedRequest)), 'json');
      expect(d).toMatchObject({ ok: false, code: 'BAD_ENUM', answer: null });
      expect((d as { message: string }).message).toMatch(
        /; not answered: the record key is not its sessionId$/,
      );
    }
  });

  it('a key whose bytes are not UTF-8 but read as the sessionId is KEY_MISMATCH (its bytes may map elsewhere)', () => {
    const sessionId = 'sess-\uFFFD';
    const event = { ...request, sessionId };
    const lookalike = Buffer.from([...Buffer.from('sess-'), 0xff]);
    expect(lookalike.toString('utf8')).toBe(sessionId); // the old string comparison accepted it
    expect(decodeRecordNow(rec(lookalike, json(event)), 'json')).toMatchObject({
      code: 'KEY_MISMATCH',
    });
    expect(decodeRecordNow(rec(Buffer.from(sessionId), json(event)), 'json')).toMatchObject({
      ok: true,
    });
  });
});
