/**
 * Waiting for a verdict (src/client/session/verdictWait.ts) against a verdict source the test
 * answers by hand: one deadline from the call, a request that timed out while queued is never
 * registered (so never sent), one wait per requestId at a time, and the consumer always stops
 * waiting once the outcome is known.
 */
import type { Verdict } from '../../src/engine/outputs';
import { GuardTimeoutError, GuardUsageError } from '../../src/client/errors';
import { type VerdictSource, VerdictWaiter } from '../../src/client/session/verdictWait';
import { answers } from '../../src/client/verdicts';

function source() {
  const expected = new Map<string, (v: Verdict) => void>();
  const forgotten: string[] = [];
  const s: VerdictSource = {
    expectVerdict: (_session, requestId) =>
      new Promise<Verdict>((resolve) => expected.set(requestId, resolve)),
    forgetVerdict: (_session, requestId) => {
      forgotten.push(requestId);
      expected.delete(requestId);
    },
  };
  return { s, expected, forgotten };
}

const verdict = { decision: 'APPROVE', requestId: 'r' } as Verdict;

describe('VerdictWait', () => {
  it('the verdict once the request is acknowledged; then nobody waits for it any more', async () => {
    const src = source();
    const waiter = new VerdictWaiter(src.s, 's');
    const wait = waiter.begin('r', 1_000);
    wait.requireTime();
    wait.register('e3');
    const outcome = wait.outcome(Promise.resolve());
    src.expected.get('r')!(verdict);
    await expect(outcome).resolves.toBe(verdict);
    expect(src.forgotten).toEqual(['r']);
    // The requestId is free again: a retry may wait for its own verdict.
    expect(() => waiter.begin('r', 1_000).register('e4')).not.toThrow();
  });

  it('no verdict in time: GuardTimeoutError with the session, request and timeout; the consumer forgets it', async () => {
    const src = source();
    const wait = new VerdictWaiter(src.s, 's').begin('r', 30);
    wait.register('e1');
    await expect(wait.outcome(Promise.resolve())).rejects.toMatchObject({
      name: 'GuardTimeoutError',
      sessionId: 's',
      requestId: 'r',
      timeoutMs: 30,
    });
    expect(src.forgotten).toContain('r');
    expect(src.expected.has('r')).toBe(false);
  });

  it('timed out while still queued: the request is refused before it is registered or sent', async () => {
    const src = source();
    const wait = new VerdictWaiter(src.s, 's').begin('r', 20);
    let handOver!: () => void;
    const sent = new Promise<void>((r) => (handOver = r));
    await expect(wait.outcome(sent)).rejects.toThrow(GuardTimeoutError);
    expect(() => wait.requireTime()).toThrow(GuardTimeoutError);
    expect(src.expected.size).toBe(0);
    handOver();
  });

  it('the same requestId twice at once is bad use; the first keeps waiting', async () => {
    const src = source();
    const waiter = new VerdictWaiter(src.s, 's');
    const first = waiter.begin('r', 1_000);
    first.register('e1');
    const firstOutcome = first.outcome(Promise.resolve());
    const second = waiter.begin('r', 1_000);
    expect(() => second.register('e2')).toThrow(GuardUsageError);
    await expect(second.outcome(Promise.reject(new Error('not sent')))).rejects.toThrow('not sent');
    // The refused second wait did not release the first one's requestId.
    expect(() => waiter.begin('r', 1_000).register('e3')).toThrow(GuardUsageError);
    src.expected.get('r')!(verdict);
    await expect(firstOutcome).resolves.toBe(verdict);
  });

  it("a send that fails is the request's outcome, and the consumer stops waiting", async () => {
    const src = source();
    const wait = new VerdictWaiter(src.s, 's').begin('r', 1_000);
    wait.register('e1');
    await expect(wait.outcome(Promise.reject(new Error('send failed')))).rejects.toThrow(
      'send failed',
    );
    expect(src.forgotten).toEqual(['r']);
  });
});

describe('answers: which verdict the shared consumer takes for a request (src/client/verdicts.ts)', () => {
  it('only the one naming the request eventId: not another eventId, not one with requestEventId null', () => {
    expect(answers({ requestEventId: 'e1' }, 'e1')).toBe(true);
    // A forger's request under our seq and requestId gets a verdict naming its own eventId.
    expect(answers({ requestEventId: 'forged' }, 'e1')).toBe(false);
    // A processor whose verdict schema has no requestEventId: never taken, the wait runs out.
    expect(answers({ requestEventId: null }, 'e1')).toBe(false);
  });
});
