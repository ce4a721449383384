/**
 * The one retry policy of the shell: a bounded number of attempts and/or a deadline, a backoff
 * between attempts, and a predicate that says which failures are worth another attempt (by
 * default the `retriable` flag of the error's code, src/errors.ts). Kafka's own retries stay
 * kafkajs' (`retry` of its client); this is for the loops around whole operations.
 */
import { isRetriable } from './errors';
import { sleep as realSleep } from './time';

export interface Backoff {
  /** The pause after the first failed attempt. */
  initialMs: number;
  /**
   * How the pause grows: `constant` (always initialMs), `linear` (initialMs × attempt) or
   * `exponential` (initialMs × 2^(attempt-1)).
   */
  growth: 'constant' | 'linear' | 'exponential';
  /** No pause is longer than this. */
  maxMs?: number;
  /** 0..1: each pause is shortened by up to this share, at random (spreads instances apart). */
  jitter?: number;
}

export interface RetryPolicy {
  /** Most attempts in all (≥ 1); unbounded when only a deadline is given. */
  attempts?: number;
  /** Give up once the next attempt would start after this many ms from the first. */
  deadlineMs?: number;
  backoff: Backoff;
  /** Whether a failure may be retried; default: its code's `retriable` flag. */
  retriable?: (e: unknown) => boolean;
  /** Told before each pause (a debug line, a console line in a benchmark). */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /**
   * The error to throw when retries are exhausted (or the failure is not retriable, with
   * `retriable` false); default: the last failure itself.
   */
  giveUp?: (e: unknown, attempts: number, retriable: boolean) => unknown;
  /** For tests: the clock, the pause and the randomness. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** The pause after failed attempt number `attempt` (1-based); `random` in [0, 1). */
export function backoffDelay(
  b: Backoff,
  attempt: number,
  random: () => number = Math.random,
): number {
  const n = Math.max(1, attempt);
  const base =
    b.growth === 'constant'
      ? b.initialMs
      : b.growth === 'linear'
        ? b.initialMs * n
        : b.initialMs * 2 ** Math.min(n - 1, 52);
  const capped = Math.min(base, b.maxMs ?? Number.POSITIVE_INFINITY);
  const jitter = Math.min(1, Math.max(0, b.jitter ?? 0));
  return Math.round(capped * (1 - jitter * random()));
}

/** Runs `f` until it succeeds, a failure is not retriable, or the attempts or deadline run out. */
export async function retry<T>(f: (attempt: number) => Promise<T>, p: RetryPolicy): Promise<T> {
  if (p.attempts === undefined && p.deadlineMs === undefined)
    throw new Error('retry: give attempts, a deadline, or both');
  const now = p.now ?? Date.now;
  const sleep = p.sleep ?? realSleep;
  const retriable = p.retriable ?? isRetriable;
  const giveUpAt = p.deadlineMs === undefined ? Number.POSITIVE_INFINITY : now() + p.deadlineMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await f(attempt);
    } catch (e) {
      const again = retriable(e);
      const delay = backoffDelay(p.backoff, attempt, p.random);
      const exhausted =
        (p.attempts !== undefined && attempt >= p.attempts) || now() + delay >= giveUpAt;
      if (!again || exhausted) throw p.giveUp ? p.giveUp(e, attempt, again) : e;
      p.onRetry?.(e, attempt, delay);
      await sleep(delay);
    }
  }
}

/**
 * Runs `attempt` until it returns without throwing, or until `gone()` (then it stops quietly);
 * each failure is reported to `failed` and followed by a pause of `delayMs`. No bound: only the
 * end of what it works for (a partition revoked, the processor stopping) stops it.
 */
export async function retryUntilDone(
  attempt: (n: number) => Promise<void>,
  gone: () => boolean,
  failed: (e: unknown) => void,
  delayMs: number,
): Promise<void> {
  const retried = retry(attempt, {
    attempts: Number.POSITIVE_INFINITY,
    backoff: { initialMs: delayMs, growth: 'constant' },
    retriable: () => !gone(),
    onRetry: (e) => failed(e),
  });
  // Retries end with a failure only once the work is gone: then the stop is quiet.
  await retried.catch((e: unknown) => {
    if (!gone()) throw e;
  });
}
