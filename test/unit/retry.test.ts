/**
 * The one retry helper (src/retry.ts): which failures it retries (by their code's `retriable`
 * flag unless told otherwise), when it gives up (attempts, deadline), and the bounds of its
 * backoff. A fake clock and sleep make it instant and exact.
 */
import fc from 'fast-check';
import { ERROR_CODES, type ErrorCode, OperationalError, isRetriable } from '../../src/errors';
import { type Backoff, backoffDelay, retry } from '../../src/retry';

/** A clock that only moves when the helper sleeps; records the pauses. */
function fakeTime() {
  let t = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => t,
    sleep: async (ms: number) => {
      pauses.push(ms);
      t += ms;
    },
  };
}

/** A function failing with `failures` in turn, then returning 'ok'; counts its calls. */
function failing(failures: unknown[]) {
  const calls: number[] = [];
  return {
    calls,
    f: async (attempt: number) => {
      calls.push(attempt);
      if (calls.length <= failures.length) throw failures[calls.length - 1];
      return 'ok';
    },
  };
}

const unavailable = () => new OperationalError('REGISTRY_UNAVAILABLE', 'HTTP 503');
const linear: Backoff = { initialMs: 500, growth: 'linear' };

describe('retry', () => {
  it('retries a failure whose code is retriable until it succeeds, pausing by the backoff', async () => {
    const time = fakeTime();
    const { f, calls } = failing([unavailable(), unavailable()]);
    await expect(retry(f, { attempts: 5, backoff: linear, ...time })).resolves.toBe('ok');
    expect(calls).toEqual([1, 2, 3]);
    expect(time.pauses).toEqual([500, 1000]);
  });

  it('does not retry a failure whose code is not retriable, nor an error without a code of the list', async () => {
    for (const e of [new OperationalError('REGISTRY_AUTH_FAILED', '401'), new TypeError('bug')]) {
      const time = fakeTime();
      const { f, calls } = failing([e]);
      await expect(retry(f, { attempts: 5, backoff: linear, ...time })).rejects.toBe(e);
      expect(calls).toEqual([1]);
      expect(time.pauses).toEqual([]);
    }
  });

  it('gives up after the last attempt with the last failure, or what giveUp makes of it', async () => {
    const last = unavailable();
    const { f, calls } = failing([unavailable(), unavailable(), last]);
    await expect(retry(f, { attempts: 3, backoff: linear, ...fakeTime() })).rejects.toBe(last);
    expect(calls).toEqual([1, 2, 3]);

    const again = failing([unavailable(), unavailable(), unavailable()]);
    const seen: [number, boolean][] = [];
    await expect(
      retry(again.f, {
        attempts: 3,
        backoff: linear,
        ...fakeTime(),
        giveUp: (_e, attempts, retriable) => {
          seen.push([attempts, retriable]);
          return new Error(`gave up after ${attempts}`);
        },
      }),
    ).rejects.toThrow('gave up after 3');
    expect(seen).toEqual([[3, true]]);
  });

  it('gives up before a pause that would end after the deadline', async () => {
    // Constant 1 s pauses, 8 s deadline: attempts at 0..7 s; the 8th failure would pause to 8 s.
    const time = fakeTime();
    const { f, calls } = failing(Array.from({ length: 20 }, unavailable));
    await expect(
      retry(f, { deadlineMs: 8_000, backoff: { initialMs: 1_000, growth: 'constant' }, ...time }),
    ).rejects.toBeInstanceOf(OperationalError);
    expect(calls.length).toBe(8);
    expect(time.now()).toBe(7_000);
  });

  it('tells onRetry of each failure it retries, with the attempt and the pause', async () => {
    const told: [string, number, number][] = [];
    const { f } = failing([unavailable(), unavailable()]);
    await retry(f, {
      attempts: 5,
      backoff: linear,
      ...fakeTime(),
      onRetry: (e, attempt, delay) => told.push([(e as Error).message, attempt, delay]),
    });
    expect(told).toEqual([
      ['HTTP 503', 1, 500],
      ['HTTP 503', 2, 1000],
    ]);
  });

  it('takes a predicate of its own instead of the codes', async () => {
    const { f, calls } = failing([new Error('not yet'), new Error('not yet')]);
    await expect(
      retry(f, { attempts: 5, backoff: linear, retriable: () => true, ...fakeTime() }),
    ).resolves.toBe('ok');
    expect(calls.length).toBe(3);
  });

  it('refuses a policy with neither attempts nor a deadline (it would never give up)', async () => {
    await expect(retry(async () => 1, { backoff: linear })).rejects.toThrow(/attempts, a deadline/);
  });
});

describe('error codes', () => {
  it('are retriable exactly as their flag says, found by the error code', () => {
    for (const [code, { retriable }] of Object.entries(ERROR_CODES)) {
      expect([code, isRetriable(new OperationalError(code as ErrorCode, 'x'))]).toEqual([
        code,
        retriable,
      ]);
      expect([code, isRetriable({ code })]).toEqual([code, retriable]);
    }
    expect(isRetriable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isRetriable(null)).toBe(false);
  });
});

describe('backoff bounds (property)', () => {
  const backoff = fc.record({
    initialMs: fc.integer({ min: 0, max: 60_000 }),
    growth: fc.constantFrom('constant' as const, 'linear' as const, 'exponential' as const),
    maxMs: fc.option(fc.integer({ min: 0, max: 600_000 }), { nil: undefined }),
    jitter: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  });
  const attempt = fc.integer({ min: 1, max: 200 });
  const random = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('a pause is never negative, never above maxMs, and never below (1 - jitter) of the unjittered one', () => {
    fc.assert(
      fc.property(backoff, attempt, random, (b, n, r) => {
        const d = backoffDelay(b, n, () => r);
        const full = backoffDelay({ ...b, jitter: 0 }, n);
        expect(d).toBeGreaterThanOrEqual(0);
        if (b.maxMs !== undefined) expect(d).toBeLessThanOrEqual(b.maxMs);
        expect(d).toBeLessThanOrEqual(full);
        expect(d).toBeGreaterThanOrEqual(Math.floor(full * (1 - (b.jitter ?? 0))));
      }),
    );
  });

  it('without jitter, pauses never shrink from one attempt to the next, and start at initialMs (capped)', () => {
    fc.assert(
      fc.property(backoff, attempt, (b, n) => {
        const plain = { ...b, jitter: 0 };
        expect(backoffDelay(plain, n + 1)).toBeGreaterThanOrEqual(backoffDelay(plain, n));
        expect(backoffDelay(plain, 1)).toBe(Math.min(b.initialMs, b.maxMs ?? Infinity));
      }),
    );
  });

  it('constant, linear and exponential grow as named', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 20 }), (ms, n) => {
        expect(backoffDelay({ initialMs: ms, growth: 'constant' }, n)).toBe(ms);
        expect(backoffDelay({ initialMs: ms, growth: 'linear' }, n)).toBe(ms * n);
        expect(backoffDelay({ initialMs: ms, growth: 'exponential' }, n)).toBe(ms * 2 ** (n - 1));
      }),
    );
  });
});
