/**
 * A spill answer the processor ignored is told from the next spill ask (src/client/spillAnswerCheck.ts):
 * the rule, the spill loop failing the compaction at the first refused retry with one line
 * naming CG_SIGNING_KEY_FILE / signingKey, the SpillWorker saying it once per session, and a
 * spill store that cannot write named with its cause (SpillStoreError).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { GuardClient } from '../../src/client/client';
import { SpillNotTrustedError, SpillStoreError } from '../../src/client/errors';
import { CLOCK_MARGIN_MS, IgnoredAnswers } from '../../src/client/ignoredAnswers';
import type { GuardedSession } from '../../src/client/session/guardedSession';
import { FileSpillStore, type SpillStore } from '../../src/client/spill';
import {
  type SpillAnswer,
  ignoredSpillAnswerMessage,
  spillAnswerIgnored,
} from '../../src/client/spillAnswerCheck';
import { SpillWorker } from '../../src/client/spillWorker';
import { turnPiece } from '../../src/client/vouch';
import type { Span, Unit } from '../../src/engine/events';
import { sessionOnFakeHost } from '../support/fakeSessionHost';
import type { SpillRequest, UnitRange, Verdict } from '../../src/engine/outputs';

const UNITS: readonly Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];
const span = fc
  .tuple(fc.nat(40), fc.integer({ min: 1, max: 12 }))
  .map(([start, length]) => ({ start, end: start + length }));
const hole = fc
  .tuple(fc.constantFrom(...UNITS), span)
  .map(([unit, s]): UnitRange => ({ unit, ...s }));
const completed = (unit: Unit, range: Span, keyId: string | null = null): SpillAnswer => ({
  type: 'SpillCompleted',
  unit,
  range,
  signature: keyId === null ? null : { keyId, value: 'x', expiresAt: 0 },
});
const inside = (h: UnitRange, unit: Unit, r: Span) =>
  h.unit === unit && h.start >= r.start && h.end <= r.end;

describe('spillAnswerIgnored: the next ask tells an ignored answer', () => {
  it('a SpillCompleted is ignored exactly when every hole of the next ask lies inside what it reported stored', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...UNITS),
        span,
        fc.array(hole, { maxLength: 6 }),
        (unit, range, holes) => {
          const ignored = spillAnswerIgnored(completed(unit, range), holes);
          expect(ignored).toBe(holes.every((h) => inside(h, unit, range)));
        },
      ),
    );
  });

  it('a hole outside the answer (new content truncated since, another unit) is never taken for an ignored answer', () => {
    fc.assert(
      fc.property(fc.constantFrom(...UNITS), span, hole, (unit, range, h) => {
        fc.pre(!inside(h, unit, range));
        expect(spillAnswerIgnored(completed(unit, range), [h])).toBe(false);
      }),
    );
  });

  it('a SpillCompleted that reported nothing stored tells nothing; a SpillFailed followed by a spill ask (not HALT) was ignored', () => {
    expect(spillAnswerIgnored(completed('TURNS', { start: 0, end: 0 }), [])).toBe(false);
    expect(spillAnswerIgnored({ type: 'SpillFailed', signature: null }, [])).toBe(true);
  });

  it('the message is one line naming the fix: CG_SIGNING_KEY_FILE / signingKey when unsigned, the key and the ring when signed', () => {
    const unsigned = ignoredSpillAnswerMessage('s', 'c', completed('TURNS', { start: 0, end: 52 }));
    expect(unsigned).not.toContain('\n');
    expect(unsigned).toMatch(
      /SpillCompleted TURNS \[0,52\).*unsigned.*CG_SIGNING_KEY_FILE.*signingKey/,
    );
    const signed = ignoredSpillAnswerMessage(
      's',
      'c',
      completed('TURNS', { start: 0, end: 52 }, 'k-1'),
    );
    expect(signed).toMatch(/key k-1.*CG_TRUSTED_KEYS_FILE.*role SPILL/);
  });
});

const POLICY = {
  windowTokens: 200_000,
  triggerTokens: 150_000,
  ceilingTokens: 160_000,
  floor: { unit: 'TURNS' as const, span: 2 },
  truncatorUnit: 'TURNS' as const,
  coverage: 'STRICT' as const,
  spill: 'ENABLED' as const,
};

/** REFUSE/SPILL over `holes` (the processor asking for a spill). */
const spillAsk = (holes: UnitRange[]): Verdict =>
  ({
    decision: 'REFUSE',
    action: 'SPILL',
    spillRequestId: 'sp-1',
    reasons: [{ code: 'EVICTED_UNCOVERED', message: '', holes }],
  }) as unknown as Verdict;

/** A session whose fake host answers the requests with `verdicts`, in order. */
const session = (verdicts: Verdict[]) => sessionOnFakeHost('loop', () => verdicts.shift()!);

/** What a compaction with the spill loop over `store` rejected with. */
function failedCompaction(s: GuardedSession, store: SpillStore): Promise<unknown> {
  return s
    .requestCompaction(
      { requestId: 'c', summaryInput: { start: 0, end: 4 }, tailStart: 4 },
      { spill: { store, transcript: () => 'six turns' } },
    )
    .then(
      () => null,
      (e: unknown) => e,
    );
}

async function opened(s: GuardedSession, turns: number): Promise<void> {
  await s.open(POLICY);
  for (let t = 0; t < turns; t++) await s.appendTurn({ role: 'USER', tokens: 10 });
}

describe('the spill loop fails the compaction at the first refused retry after an ignored answer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-answer-check-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const holes = [{ unit: 'TURNS' as const, start: 0, end: 3 }];

  it('unsigned, asked again for the same holes: SpillNotTrustedError naming CG_SIGNING_KEY_FILE, and no second spill', async () => {
    const { session: s, sent } = session([spillAsk(holes), spillAsk(holes), spillAsk(holes)]);
    await opened(s, 6);
    const error = await failedCompaction(s, new FileSpillStore(dir));
    expect(error).toBeInstanceOf(SpillNotTrustedError);
    expect((error as SpillNotTrustedError).code).toBe('SPILL_NOT_TRUSTED');
    expect((error as Error).message).toMatch(/CG_SIGNING_KEY_FILE/);
    expect(sent.filter((e) => e.type === 'SpillCompleted')).toHaveLength(1);
  });

  it('asked again for holes beyond what was answered: no error, the loop spills again', async () => {
    const later = [{ unit: 'TURNS' as const, start: 6, end: 8 }];
    const approve = { decision: 'APPROVE', action: 'NONE', reasons: [] } as unknown as Verdict;
    const { session: s, sent } = session([spillAsk(holes), spillAsk(later), approve]);
    await opened(s, 6);
    const verdict = await s.requestCompaction(
      { requestId: 'c', summaryInput: { start: 0, end: 4 }, tailStart: 4 },
      { spill: { store: new FileSpillStore(dir), transcript: () => 'six turns' } },
    );
    expect(verdict.decision).toBe('APPROVE');
    expect(sent.filter((e) => e.type === 'SpillCompleted')).toHaveLength(2);
  });

  it('a store that cannot write: SpillFailed is sent, then SpillStoreError naming the store and the cause; no retry is asked', async () => {
    const file = path.join(dir, 'a-file');
    writeFileSync(file, '');
    const store = new FileSpillStore(path.join(file, 'spills'));
    const { session: s, sent } = session([spillAsk(holes)]);
    await opened(s, 6);
    const error = await failedCompaction(s, store);
    expect(error).toBeInstanceOf(SpillStoreError);
    expect((error as Error).message).toContain(`spill store FileSpillStore(${store.dir})`);
    expect((error as Error).message).toMatch(/could not write the spill of TURNS\[0,6\).*ENOTDIR/);
    expect(sent.map((e) => e.type).slice(-2)).toEqual(['CompactionRequested', 'SpillFailed']);
  });
});

describe('the SpillWorker', () => {
  /** The worker's client as `answer` uses it; every answer sent unsigned. */
  function worker(store: SpillStore): {
    worker: SpillWorker;
    sent: Record<string, unknown>[];
    lines: string[];
  } {
    const sent: Record<string, unknown>[] = [];
    const lines: string[] = [];
    const client = {
      registryCodec: { registry: {} },
      signingKey: null,
      outOfBand: (event: Record<string, unknown>) => {
        const full = { ...event, signature: null };
        sent.push(full);
        return Promise.resolve(full);
      },
    } as unknown as GuardClient;
    const log = { error: (_o: object, line: string) => lines.push(line) };
    const source = () =>
      [0, 1, 2].map((t) =>
        turnPiece(
          { turn: t, tokens: { start: t, end: t + 1 }, messages: { start: t, end: t + 1 } },
          `turn ${t}`,
        ),
      );
    return { worker: new SpillWorker(client, { store, source }, log as never), sent, lines };
  }
  const request = (
    seq: number,
    holes: UnitRange[],
    requestedAt = Date.now() + 60_000,
  ): SpillRequest =>
    ({
      spillRequestId: `s:c:${seq}`,
      sessionId: 's',
      requestId: 'c',
      unit: 'TURNS',
      range: { start: 0, end: 3 },
      holes,
      reasons: [],
      requestedAt,
    }) as unknown as SpillRequest;

  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-answer-worker-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('asked again for what it answered unsigned: one error line naming CG_SIGNING_KEY_FILE / signingKey, however often it is asked', async () => {
    const { worker: w, sent, lines } = worker(new FileSpillStore(dir));
    const holes = [{ unit: 'TURNS' as const, start: 0, end: 2 }];
    for (let seq = 4; seq < 9; seq++) await w.answer(request(seq, holes));
    expect(sent).toHaveLength(5);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^SpillWorker: session "s".*unsigned.*CG_SIGNING_KEY_FILE.*signingKey/,
    );
  });

  it('requests made before its answer was acknowledged (a backlog, one on its way) say nothing', async () => {
    const { worker: w, sent, lines } = worker(new FileSpillStore(dir));
    const holes = [{ unit: 'TURNS' as const, start: 0, end: 2 }];
    for (let seq = 4; seq < 9; seq++) await w.answer(request(seq, holes, Date.now() - 1));
    expect(sent).toHaveLength(5);
    expect(lines).toEqual([]);
  });

  it('a store that cannot write: one error line naming the store and the cause, and a SpillFailed', async () => {
    const store: SpillStore = {
      name: 's3://spills',
      write: () => Promise.reject(new Error('AccessDenied: no write to bucket')),
      read: () => Promise.reject(new Error('unused')),
    };
    const { worker: w, sent, lines } = worker(store);
    await w.answer(request(4, []));
    expect(lines).toEqual([
      expect.stringMatching(
        /^spill store s3:\/\/spills could not write .*AccessDenied: no write to bucket$/,
      ),
    ]);
    expect(sent).toEqual([expect.objectContaining({ type: 'SpillFailed' })]);
  });
});

describe('IgnoredAnswers', () => {
  it('the same answer repeated keeps the time of the first: a request made later than it by the margin counts, one within it does not', () => {
    const lines: string[] = [];
    const clock = { t: 0 };
    const log = { error: (_o: object, l: string) => lines.push(l) };
    const memory = new IgnoredAnswers(log as never, () => clock.t);
    const answer = {
      type: 'SpillCompleted',
      unit: 'TURNS',
      range: { start: 0, end: 5 },
      signature: null,
    };
    const holes = [{ unit: 'TURNS' as const, start: 0, end: 2 }];
    const ask = (requestedAt: number) =>
      memory.check({ sessionId: 's', requestId: 'r', holes, requestedAt });
    for (; clock.t < 1_500; clock.t += 300) {
      memory.answered('s', answer);
      ask(clock.t + 100);
    }
    expect(lines).toEqual([]);
    ask(CLOCK_MARGIN_MS + 1);
    expect(lines).toHaveLength(1);
  });

  it('remembers at most `capacity` sessions, the oldest forgotten first', () => {
    const lines: string[] = [];
    const log = { error: (_o: object, l: string) => lines.push(l) };
    const memory = new IgnoredAnswers(log as never, () => 0, 2);
    const answer = { type: 'SpillFailed', signature: null };
    for (const s of ['a', 'b', 'c']) memory.answered(s, answer);
    for (const s of ['a', 'b', 'c'])
      memory.check({ sessionId: s, requestId: 'r', holes: [], requestedAt: 10_000 });
    expect(lines.map((l) => /session "(.)"/.exec(l)![1])).toEqual(['b', 'c']);
  });
});
