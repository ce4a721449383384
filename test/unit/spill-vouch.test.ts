/**
 * What a spill may sign (contract §4b, rev 12; src/client/vouch.ts): only positions it stored
 * and read back, position by position, from the request's start. `vouchedRange` is the rule;
 * `storeVouched` writes, reads back and applies it; the SpillWorker and the client's own spill
 * loop both answer with what it returns (a forged request over [0, 2^52 − 1) for 36 stored
 * bytes was signed whole before).
 */
import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { GuardClient } from '../../src/client/client';
import { GuardedSession } from '../../src/client/session/guardedSession';
import { FileSpillStore, type SpillStore } from '../../src/client/spill';
import { sessionOnFakeHost } from '../support/fakeSessionHost';
import { SpillWorker, type SpillSource } from '../../src/client/spillWorker';
import {
  storeVouched,
  type TranscriptPiece,
  turnPiece,
  vouchedRange,
} from '../../src/client/vouch';
import type { ContextEvent, Span, Unit } from '../../src/engine/events';
import type { SpillRequest, Verdict } from '../../src/engine/outputs';

const HUGE = 2 ** 52 - 1;

/** Every position of `s` (small spans only). */
const positionsOf = (s: Span): number[] =>
  Array.from({ length: Math.max(0, s.end - s.start) }, (_, i) => s.start + i);

const span = fc
  .tuple(fc.nat(40), fc.nat(12))
  .map(([start, length]) => ({ start, end: start + length }));

describe('vouchedRange: what a spill may sign', () => {
  it('is a prefix of the request, every position of it held, and it stops only at a position nothing holds', () => {
    fc.assert(
      fc.property(span, fc.array(span, { maxLength: 8 }), (requested, held) => {
        const { range, firstMissing } = vouchedRange(requested, held);
        const isHeld = (x: number) => held.some((h) => h.start <= x && x < h.end);
        // Within the request, from its start.
        expect(range.start).toBe(requested.start);
        expect(range.end).toBeGreaterThanOrEqual(requested.start);
        expect(range.end).toBeLessThanOrEqual(requested.end);
        // Never a position that was not held.
        for (const x of positionsOf(range)) expect(isHeld(x)).toBe(true);
        // As long as it can be: it stops at the request's end or at a position not held.
        if (range.end < requested.end) {
          expect(firstMissing).toBe(range.end);
          expect(isHeld(range.end)).toBe(false);
        } else expect(firstMissing).toBeNull();
      }),
    );
  });

  it('held spans that are empty, negative, reversed or not integers hold nothing', () => {
    const junk = [
      { start: 0, end: 0 },
      { start: -5, end: 3 },
      { start: 4, end: 1 },
      { start: 0, end: 2.5 },
      { start: 0, end: Number.POSITIVE_INFINITY },
    ];
    expect(vouchedRange({ start: 0, end: 10 }, junk)).toEqual({
      range: { start: 0, end: 0 },
      firstMissing: 0,
    });
  });

  it('a request over [0, 2^52 − 1) with 3 positions held vouches for those 3, not the request', () => {
    expect(vouchedRange({ start: 0, end: HUGE }, [{ start: 0, end: 3 }])).toEqual({
      range: { start: 0, end: 3 },
      firstMissing: 3,
    });
  });
});

/** Turn i holds 12 bytes "turn 00000i\n": 3 turns, 36 bytes, as in the finding. */
const line = (turn: number) => `turn ${String(turn).padStart(6, '0')}\n`;
const at = (turn: number) => ({
  turn,
  tokens: { start: 10 * turn, end: 10 * turn + 10 },
  messages: { start: turn, end: turn + 1 },
});
const turns = (ns: readonly number[]): TranscriptPiece[] =>
  ns.map((n) => turnPiece(at(n), line(n)));

describe('storeVouched with a FileSpillStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-vouch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const spill = (unit: Unit, range: Span) => ({
    sessionId: 's',
    spillRequestId: 's:r:1',
    unit,
    range,
  });

  it('a request beyond what is held: stores the 36 bytes of the 3 turns held and reports TURNS [0,3), not [0, 2^52 − 1)', async () => {
    const store = new FileSpillStore(dir);
    const out = await storeVouched(
      store,
      spill('TURNS', { start: 0, end: HUGE }),
      turns([0, 1, 2]),
    );
    expect(out.range).toEqual({ start: 0, end: 3 });
    const back = await store.read(out.handle);
    expect(back.toString()).toBe(line(0) + line(1) + line(2));
    expect(back.length).toBe(36);
  });

  it('a hole: only the turns before it are stored and reported, in the unit asked (TOKENS here)', async () => {
    const store = new FileSpillStore(dir);
    const out = await storeVouched(store, spill('TOKENS', { start: 0, end: 40 }), turns([0, 1, 3]));
    expect(out.range).toEqual({ start: 0, end: 20 });
    expect((await store.read(out.handle)).toString()).toBe(line(0) + line(1));
  });

  it('no transcript of the session: throws, naming the session and the range, and stores nothing', async () => {
    const store = new FileSpillStore(dir);
    await expect(
      storeVouched(store, spill('TURNS', { start: 0, end: HUGE }), null),
    ).rejects.toThrow(
      `session s: no transcript of this session is held here: nothing of TURNS[0,${HUGE}) was stored`,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('nothing held at the request start: throws naming the first missing position, stores nothing', async () => {
    const store = new FileSpillStore(dir);
    await expect(
      storeVouched(store, spill('TURNS', { start: 0, end: 5 }), turns([1, 2])),
    ).rejects.toThrow('does not hold TURNS position 0, the first of TURNS[0,5)');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('pieces placed in another unit only hold nothing of the request: throws, saying so', async () => {
    const store = new FileSpillStore(dir);
    const onlyTurns: TranscriptPiece[] = [
      { positions: { TURNS: { start: 0, end: 3 } }, content: 'x' },
    ];
    await expect(
      storeVouched(store, spill('TOKENS', { start: 0, end: 30 }), onlyTurns),
    ).rejects.toThrow('(its pieces are not placed in TOKENS)');
  });

  it('content without positions (bytes, as sources gave before) holds nothing: throws, stores nothing', async () => {
    const store = new FileSpillStore(dir);
    const bytes = 'all of it' as unknown as TranscriptPiece[];
    await expect(storeVouched(store, spill('TURNS', { start: 0, end: 3 }), bytes)).rejects.toThrow(
      'the source gave content without positions',
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a piece given twice, or one inside a longer piece, is stored once: the stored bytes are the covering pieces in position order', async () => {
    const store = new FileSpillStore(dir);
    const whole: TranscriptPiece = {
      positions: { TURNS: { start: 1, end: 3 } },
      content: 'one+two\n',
    };
    const pieces = [...turns([1, 0, 0, 2]), whole];
    const out = await storeVouched(store, spill('TURNS', { start: 0, end: 3 }), pieces);
    expect(out.range).toEqual({ start: 0, end: 3 });
    expect((await store.read(out.handle)).toString()).toBe(line(0) + 'one+two\n');
  });

  it('an empty piece holds nothing (a turn with no bytes was not stored)', async () => {
    const store = new FileSpillStore(dir);
    const pieces = [turnPiece(at(0), line(0)), turnPiece(at(1), ''), turnPiece(at(2), line(2))];
    const out = await storeVouched(store, spill('TURNS', { start: 0, end: 3 }), pieces);
    expect(out.range).toEqual({ start: 0, end: 1 });
  });
});

describe('storeVouched reads back before it reports', () => {
  /** A store that keeps the bytes in memory and gives back only the first `keep` of them. */
  const lossy = (keep: (length: number) => number): SpillStore & { last: Buffer } => {
    const s = {
      last: Buffer.alloc(0),
      write: (w: { content: Uint8Array }) => {
        s.last = Buffer.from(w.content);
        return Promise.resolve('mem://spill');
      },
      read: () => Promise.resolve(s.last.subarray(0, keep(s.last.length))),
    };
    return s;
  };

  it('every position reported lies in a piece found again, byte for byte, where it was written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat(12), { maxLength: 10 }),
        fc.nat(200),
        async (held, keep) => {
          const store = lossy((n) => Math.min(n, keep));
          const pieces = turns(held);
          const request = {
            sessionId: 's',
            spillRequestId: 'r',
            unit: 'TURNS' as const,
            range: { start: 0, end: 12 },
          };
          let out: { range: Span } | null = null;
          try {
            out = await storeVouched(store, request, pieces);
          } catch {
            out = null;
          }
          // What the store gives back, turn by turn: a turn counts if its bytes are there.
          const written = store.last;
          const back = written.subarray(0, Math.min(written.length, keep));
          const readBack = new Set<number>();
          let offset = 0;
          for (const n of [...held].sort((a, b) => a - b)) {
            if (offset >= written.length) break;
            const bytes = Buffer.from(line(n));
            if (back.subarray(offset, offset + bytes.length).equals(bytes)) readBack.add(n);
            offset += bytes.length;
          }
          if (out === null) expect(readBack.has(0)).toBe(false);
          else {
            expect(out.range.start).toBe(0);
            for (const x of positionsOf(out.range)) expect(readBack.has(x)).toBe(true);
            expect(readBack.has(out.range.end)).toBe(false);
          }
        },
      ),
    );
  });

  it('a store that gives back something else: nothing is reported, the error says the store did not give it back', async () => {
    const store: SpillStore = {
      write: () => Promise.resolve('mem://x'),
      read: () => Promise.resolve(Buffer.from('not what was written')),
    };
    await expect(
      storeVouched(
        store,
        { sessionId: 's', spillRequestId: 'r', unit: 'TURNS', range: { start: 0, end: 2 } },
        turns([0, 1]),
      ),
    ).rejects.toThrow('the spill store did not give back TURNS position 0');
  });
});

/** The worker's client, as far as `answer` uses it: the out-of-band events it would send. */
function fakeClient(): { client: GuardClient; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const client = {
    registryCodec: { registry: { getSchema: () => Promise.reject(new Error('unused')) } },
    signingKey: null,
    outOfBand: (event: Record<string, unknown>) => {
      sent.push(event);
      return Promise.resolve(event);
    },
  } as unknown as GuardClient;
  return { client, sent };
}

const request = (sessionId: string, unit: Unit, range: Span): SpillRequest =>
  ({
    spillRequestId: `${sessionId}:req:4`,
    sessionId,
    requestId: 'req',
    unit,
    range,
    holes: [],
    reasons: [],
    requestedAt: 1_000,
  }) as unknown as SpillRequest;

describe('SpillWorker answers only for what it stored', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-worker-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const transcripts = new Map<string, string[]>([['known', [line(0), line(1), line(2)]]]);
  const source: SpillSource = (r) =>
    transcripts.get(r.sessionId)?.map((l, turn) => turnPiece(at(turn), l)) ?? null;

  it('a session it has no transcript of, asked [0, 2^52 − 1): SpillFailed, nothing signed as stored, nothing written', async () => {
    const { client, sent } = fakeClient();
    const worker = new SpillWorker(client, { store: new FileSpillStore(dir), source });
    await worker.answer(request('forged', 'TURNS', { start: 0, end: HUGE }));
    expect(sent).toEqual([
      expect.objectContaining({
        type: 'SpillFailed',
        sessionId: 'forged',
        error: expect.stringContaining('no transcript of this session'),
      }),
    ]);
    expect(readdirSync(dir)).toEqual([]);
    expect(worker.answered).toBe(1);
  });

  it('a known session asked [0, 2^52 − 1) with 3 turns (36 bytes) held: SpillCompleted over TURNS [0,3), its handle reads back those bytes', async () => {
    const { client, sent } = fakeClient();
    const store = new FileSpillStore(dir);
    const worker = new SpillWorker(client, { store, source });
    await worker.answer(request('known', 'TURNS', { start: 0, end: HUGE }));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      type: 'SpillCompleted',
      unit: 'TURNS',
      range: { start: 0, end: 3 },
    });
    const back = await store.read(sent[0]!.handle as string);
    expect(back.toString()).toBe(transcripts.get('known')!.join(''));
  });

  it('the same session asked in TOKENS: the turns are placed in tokens, TOKENS [0,30) reported', async () => {
    const { client, sent } = fakeClient();
    const worker = new SpillWorker(client, { store: new FileSpillStore(dir), source });
    await worker.answer(request('known', 'TOKENS', { start: 0, end: 1_000 }));
    expect(sent[0]).toMatchObject({
      type: 'SpillCompleted',
      unit: 'TOKENS',
      range: { start: 0, end: 30 },
    });
  });

  it('a request that starts beyond what is held: SpillFailed naming the first missing position', async () => {
    const { client, sent } = fakeClient();
    const worker = new SpillWorker(client, { store: new FileSpillStore(dir), source });
    await worker.answer(request('known', 'TURNS', { start: 5, end: 9 }));
    expect(sent).toEqual([
      expect.objectContaining({
        type: 'SpillFailed',
        error: expect.stringContaining('does not hold TURNS position 5'),
      }),
    ]);
  });
});

describe("the client's spill loop reports only what it stored", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-loop-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A session whose port acknowledges every send and answers the request REFUSE/SPILL, then APPROVE. */
  function sessionWithFakeHost(): { session: GuardedSession; sent: ContextEvent[] } {
    let asked = 0;
    return sessionOnFakeHost(
      'loop',
      () =>
        (asked++ === 0
          ? { decision: 'REFUSE', action: 'SPILL', spillRequestId: 'sp-1' }
          : { decision: 'APPROVE', action: 'NONE', spillRequestId: null }) as unknown as Verdict,
    );
  }

  async function fiveTurns(session: GuardedSession): Promise<void> {
    await session.open({
      windowTokens: 200_000,
      triggerTokens: 150_000,
      ceilingTokens: 160_000,
      floor: { unit: 'TOKENS', span: 4 },
      truncatorUnit: 'TOKENS',
      coverage: 'STRICT',
      spill: 'ENABLED',
    });
    for (let t = 0; t < 5; t++) await session.appendTurn({ role: 'USER', tokens: 10 });
  }

  it('a reader missing turn 3 of 5: SpillCompleted over TOKENS [0,30), the first three turns stored and read back', async () => {
    const { session, sent } = sessionWithFakeHost();
    await fiveTurns(session);
    const store = new FileSpillStore(dir);
    const entries: string[] = [line(0), line(1), line(2)];
    entries[4] = line(4);
    entries.length = 5;
    await session.requestCompaction(
      { summaryInput: { start: 0, end: 20 }, tailStart: 20 },
      { spill: { store, transcript: () => entries } },
    );
    const completed = sent.filter((e) => e.type === 'SpillCompleted');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ unit: 'TOKENS', range: { start: 0, end: 30 } });
    const handle = (completed[0] as { handle: string }).handle;
    expect((await store.read(handle)).toString()).toBe(line(0) + line(1) + line(2));
  });

  it('a reader missing turn 0: SpillFailed naming position 0, no SpillCompleted', async () => {
    const { session, sent } = sessionWithFakeHost();
    await fiveTurns(session);
    const entries: string[] = [];
    entries[1] = line(1);
    entries.length = 5;
    await session.requestCompaction(
      { summaryInput: { start: 0, end: 20 }, tailStart: 20 },
      { spill: { store: new FileSpillStore(dir), transcript: () => entries } },
    );
    expect(sent.filter((e) => e.type === 'SpillCompleted')).toEqual([]);
    expect(sent.filter((e) => e.type === 'SpillFailed')).toEqual([
      expect.objectContaining({
        error: expect.stringContaining('does not hold TOKENS position 0'),
      }),
    ]);
  });
});
