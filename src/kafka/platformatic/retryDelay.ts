/**
 * How long the transactional producer waits before it retries a request. A transaction begun
 * right after a commit meets CONCURRENT_TRANSACTIONS on its AddPartitionsToTxn until the
 * coordinator has written the previous transaction's markers, a few milliseconds on a healthy
 * cluster. With one producer per process that is nearly every transaction: the next shared
 * transaction starts as soon as the last one committed, whenever commits wait. The client's
 * delay is constant, so a flat `retryMs` (10 ms) added about 10 ms to most transactions and
 * to the next queued commit's wait (bench/README.md, "Where a platformatic commit waits"). For
 * that error alone it starts at 1 ms and doubles up to `retryMs`, as the Java producer
 * shortens its own backoff for it; every other retry keeps `retryMs`.
 */
import type { RetryDelayGetter } from '@platformatic/kafka';
import { hasProtocolError } from './errorTypes';

/** The retry delay for a retry numbered `attempt` (1 for the first) after `error`. Pure. */
export function transactionalRetryDelay(retryMs: number): RetryDelayGetter {
  return (_client, _operation, attempt, _retries, error) =>
    hasProtocolError(error, 'CONCURRENT_TRANSACTIONS')
      ? Math.min(retryMs, 2 ** Math.max(0, attempt - 1))
      : retryMs;
}

/**
 * A delay that starts at `initialMs` and doubles up to `maxMs` with each retry (`attempt`
 * 1 for the first): kafkajs' retrier for the input producer (200 ms up to 5 s), without its
 * random factor. Pure.
 */
export function doublingRetryDelay(initialMs: number, maxMs: number): RetryDelayGetter {
  return (_client, _operation, attempt) =>
    Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
}
