/**
 * Writes the poison records of the bounds review into test/fuzz/corpus/ (poison-*.json), each
 * with what it must do now. Run once when they change: `npx tsx test/fuzz/poison.ts`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ContextEvent } from '../../src/engine/events';
import { eventUnionType, wrapEvent } from '../../src/schema/schemas';
import { CORPUS_DIR, type CorpusFile, type CorpusRecord, specOf } from './corpus';
import { SEED_POLICY, SessionBuilder } from '../support/sessionBuilder';

function json(e: unknown, expect?: CorpusRecord['expect']): CorpusRecord {
  const r = e as { sessionId: string };
  return { key: r.sessionId, value: JSON.stringify(e), ...(expect ? { expect } : {}) };
}

function write(name: string, file: CorpusFile): void {
  fs.writeFileSync(path.join(CORPUS_DIR, `${name}.json`), `${JSON.stringify(file, null, 2)}\n`);
}

const DEPTH = 5000;

// 1. A 10 KB record nested 5,000 levels deep: it crashed `audit` (stack overflow in the
// repeated-key walk) and held the processor's partition.
{
  const b = new SessionBuilder('deep');
  b.open(SEED_POLICY);
  const turn = b.turn(10).last;
  const head = JSON.stringify(turn).slice(0, -1);
  write('poison-deep-nesting', {
    about:
      'A TurnAppended with an extra field nested 5,000 levels deep (10 KB): TOO_DEEP, found on the text without recursion; the session goes on.',
    ring: false,
    records: [
      json(b.events[0], { deadLetter: null }),
      {
        key: 'deep',
        value: {
          parts: [`${head},"x":`, { repeat: DEPTH, of: '[' }, { repeat: DEPTH, of: ']' }, '}'],
        },
        expect: { deadLetter: 'TOO_DEEP' },
      },
    ],
  });
}

// 2. turn = 9007199254740990: the next changelog write threw in avsc (its long limit), and the
// partition resynchronised in a loop. As JSON and as Avro (a varint no JS number holds exactly).
{
  const b = new SessionBuilder('big-turn');
  b.open(SEED_POLICY);
  b.turn(10);
  const big = { ...b.turn(10).last, turn: 9_007_199_254_740_990 } as ContextEvent;
  b.request('r1', 'TURNS', 0, 1, 1);
  write('poison-huge-turn-json', {
    about:
      'A TurnAppended with turn 9007199254740990 (over 2^52 − 1): NUMBER_TOO_LARGE; the request after it is answered (REFUSE: the dead-lettered seq is a gap).',
    ring: false,
    records: [
      json(b.events[0], { deadLetter: null }),
      json(b.events[1], { deadLetter: null }),
      json(big, { deadLetter: 'NUMBER_TOO_LARGE' }),
      json(b.events[3], { deadLetter: null, verdicts: ['REFUSE'] }),
    ],
  });
  // avsc reads a long above 2^53 as an inexact double: the marker's varint is replaced by that
  // of 9007199254740990 (zigzag: 18014398509481980).
  const marker = { ...big, turn: 3_141_592_653 } as ContextEvent;
  const body = eventUnionType.toBuffer(wrapEvent(marker));
  const zig = (n: bigint) => {
    let z = n << 1n;
    const out: number[] = [];
    do {
      let byte = Number(z & 0x7fn);
      z >>= 7n;
      if (z > 0n) byte |= 0x80;
      out.push(byte);
    } while (z > 0n);
    return Buffer.from(out);
  };
  const from = zig(3_141_592_653n);
  const at = body.indexOf(from);
  const avro = Buffer.concat([
    Buffer.from([0, 0, 0, 0, 1]),
    body.subarray(0, at),
    zig(9_007_199_254_740_990n),
    body.subarray(at + from.length),
  ]);
  write('poison-huge-turn-avro', {
    about:
      'The same TurnAppended in Avro (Confluent wire format), turn 9007199254740990 as a varint: NUMBER_TOO_LARGE.',
    ring: false,
    records: [
      json(b.events[0], { deadLetter: null }),
      json(b.events[1], { deadLetter: null }),
      { key: 'big-turn', value: specOf(avro), expect: { deadLetter: 'NUMBER_TOO_LARGE' } },
    ],
  });
}

// 3. A request on an unknown session with a 540 KB requestId: its verdict (the id copied twice)
// was ~1.1 MB, refused by the broker on every retry.
{
  const request = new SessionBuilder('unknown').request('r', 'TURNS', 0, 1, 1).last;
  const head = JSON.stringify({ ...request, requestId: 'RID' });
  const [before, after] = head.split('RID') as [string, string];
  write('poison-huge-request-id', {
    about:
      'A CompactionRequested on an unknown session with a 540 KB requestId: TOO_LONG, and not answered (its identity is over the bounds, §3), so no verdict can carry it.',
    ring: false,
    records: [
      {
        key: 'unknown',
        value: { parts: [before, { repeat: 540_000, of: 'r' }, after] },
        expect: { deadLetter: 'TOO_LONG', verdicts: [] },
      },
    ],
  });
}

// 4. A record whose key is 600 KB and not its sessionId: the key was copied into the dead
// letter's error header, making the dead letter too large for the DLQ on every retry.
{
  const b = new SessionBuilder('keyed');
  b.open(SEED_POLICY);
  write('poison-huge-key', {
    about:
      'A valid SessionOpened under a 600 KB record key (not its sessionId): KEY_MISMATCH, and the dead letter adds at most a bounded header to the record it carries.',
    ring: false,
    records: [
      {
        key: { repeat: 600_000, of: 'k' },
        value: JSON.stringify(b.events[0]),
        expect: { deadLetter: 'KEY_MISMATCH' },
      },
    ],
  });
}

// 5. Fragmentation: every other turn pinned, then a request that evicts the pins. Unbounded,
// `pins` grew a range per pinned turn and the EVICTED_PINNED verdict listed them all.
{
  const b = new SessionBuilder('pinned', 1_767_225_600_000, 1);
  b.open({ ...SEED_POLICY, coverage: 'PINNED' });
  const TURNS = 300;
  for (let i = 0; i < TURNS; i++)
    b.turn(10, i % 2 === 0 ? 'USER' : 'ASSISTANT', i % 2 === 0 ? ['CONSTRAINT'] : []);
  b.request('evict', 'TURNS', TURNS / 2, TURNS - 12, TURNS - 12);
  const records = b.events.map((e) => json(e));
  records[records.length - 1]!.expect = { deadLetter: null, verdicts: ['REFUSE'] };
  write('poison-alternating-pins', {
    about:
      '300 turns, every other one pinned, then a request whose summary input starts above half of them (PINNED coverage: EVICTED_PINNED): pins stay at ≤ 128 ranges (§4a, STATE_COARSENED) and the REFUSE lists at most 16 ranges per list (§6).',
    ring: false,
    records,
  });
}
