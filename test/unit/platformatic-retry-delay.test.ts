/**
 * src/kafka/platformatic/retryDelay.ts on the errors @platformatic/kafka 2.12.1 builds for a
 * refused AddPartitionsToTxn (API key 24): a ResponseError, which reads the code into a
 * ProtocolError, as its producer's kTransactionAddPartitions passes it to the retry.
 */
import { ResponseError } from '@platformatic/kafka';
import fc from 'fast-check';
import { transactionalRetryDelay } from '../../src/kafka/platformatic/retryDelay';

const ADD_PARTITIONS_TO_TXN = 24;

// Kafka's error codes: CONCURRENT_TRANSACTIONS 51, COORDINATOR_LOAD_IN_PROGRESS 14,
// NOT_COORDINATOR 16, REQUEST_TIMED_OUT 7.
const CODES: Record<string, number> = {
  CONCURRENT_TRANSACTIONS: 51,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  NOT_COORDINATOR: 16,
  REQUEST_TIMED_OUT: 7,
};

/** The response's error for the transaction, as the client reads it into a ProtocolError. */
const refused = (type: string) =>
  new ResponseError(
    ADD_PARTITIONS_TO_TXN,
    4,
    { '/results_by_transaction/0/topic_results/0/results_by_partition/0': [CODES[type]!, null] },
    {},
  );

const delays = (retryMs: number, error: Error, attempts: number) => {
  const delay = transactionalRetryDelay(retryMs);
  return Array.from({ length: attempts }, (_, i) =>
    delay({}, 'addPartitionsToTransaction', i + 1, 100, error),
  );
};

it('retries CONCURRENT_TRANSACTIONS (the last commit still writing its markers) after 1, 2, 4, 8 ms, then every retryMs', () => {
  expect(delays(10, refused('CONCURRENT_TRANSACTIONS'), 7)).toEqual([1, 2, 4, 8, 10, 10, 10]);
});

it('retries every other error after retryMs, from the first retry on', () => {
  for (const type of ['COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR', 'REQUEST_TIMED_OUT'])
    expect(delays(10, refused(type), 3)).toEqual([10, 10, 10]);
  expect(delays(25, new Error('connection closed'), 2)).toEqual([25, 25]);
});

it('never waits longer than retryMs, nor less than 1 ms, whatever the attempt', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 60_000 }),
      fc.integer({ min: 1, max: 1_000 }),
      (retryMs, attempt) => {
        const delay = transactionalRetryDelay(retryMs)(
          {},
          'addPartitionsToTransaction',
          attempt,
          1_000,
          refused('CONCURRENT_TRANSACTIONS'),
        );
        return delay >= 1 && delay <= retryMs;
      },
    ),
  );
});
