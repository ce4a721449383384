/**
 * Fencing is recognised by kafkajs' error types, not by message text (src/kafka/kafkajs/errorTypes.ts):
 * a KafkaJSProtocolError of a fencing type, bare or wrapped as kafkajs' retrier wraps it, is a
 * fencing error; other protocol errors, and messages that merely mention fencing, are not. So is
 * a broker's refusal of a record as too large (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE).
 */
import {
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from 'kafkajs';
import { ConfigError } from '../../src/config/settings';
import { PRODUCER_FENCING_TYPES } from '../../src/kafka/transport/errors';
import {
  fencingErrorType,
  isRecordTooLarge,
  isTransientKafkaFailure,
  TOO_LARGE_ERROR_TYPES,
} from '../../src/kafka/kafkajs/errorTypes';
import { commitWithin } from '../../src/kafka/transaction';
import { RecordTooLargeError, TransactionOutcomeUnknownError } from '../../src/kafka/transport';
import { ERROR_CODES, isRetriable } from '../../src/errors';

/** A protocol error as kafkajs builds it from a broker's error code (src/protocol/error.js). */
function protocolError(type: string, code: number, retriable = false): KafkaJSProtocolError {
  return new KafkaJSProtocolError({
    type,
    code,
    retriable,
    message: `${type} from the broker`,
  } as never);
}

describe('fencingErrorType', () => {
  it.each([...PRODUCER_FENCING_TYPES])('recognises a bare KafkaJSProtocolError %s', (type) => {
    expect(fencingErrorType(protocolError(type, 47))).toBe(type);
  });

  it('recognises a fencing error wrapped by the retrier (non-retriable, retries exceeded)', () => {
    const epoch = protocolError('INVALID_PRODUCER_EPOCH', 47);
    // As kafkajs' retrier does (src/retry/index.js); its typings omit the second argument.
    const NonRetriable = KafkaJSNonRetriableError as unknown as new (
      e: Error,
      o: { cause: Error },
    ) => KafkaJSNonRetriableError;
    const wrapped = new NonRetriable(epoch, { cause: epoch });
    expect(fencingErrorType(wrapped)).toBe('INVALID_PRODUCER_EPOCH');
    const unknown = protocolError('UNKNOWN_PRODUCER_ID', 59);
    const exceeded = new KafkaJSNumberOfRetriesExceeded(unknown, {
      retryCount: 5,
      retryTime: 100,
    } as never);
    expect(fencingErrorType(exceeded)).toBe('UNKNOWN_PRODUCER_ID');
  });

  it('does not take other protocol errors for fencing', () => {
    for (const [type, code] of [
      ['CONCURRENT_TRANSACTIONS', 51],
      ['NOT_LEADER_FOR_PARTITION', 6],
      ['REQUEST_TIMED_OUT', 7],
      ['KAFKAJS_UNKNOWN_ERROR_CODE', -99],
    ] as const) {
      expect([type, fencingErrorType(protocolError(type, code, true))]).toEqual([type, null]);
    }
  });

  it('does not go by message text: a plain error that says FENCED is not fencing', () => {
    expect(fencingErrorType(new Error('PRODUCER_FENCED: INVALID_PRODUCER_EPOCH'))).toBeNull();
    expect(
      fencingErrorType(new KafkaJSError('Producer attempted an operation with an old epoch')),
    ).toBeNull();
    expect(fencingErrorType(undefined)).toBeNull();
    expect(fencingErrorType('INVALID_PRODUCER_EPOCH')).toBeNull();
  });

  it('stops on a cause cycle', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(fencingErrorType(a)).toBeNull();
  });
});

describe('commitWithin', () => {
  it('gives up on a commit that never ends, as an unknown outcome, and drops its late failure', async () => {
    let failLate!: (e: Error) => void;
    const never = new Promise<never>((_, reject) => (failLate = reject));
    const given = await commitWithin(never, 20).catch((e: unknown) => e);
    expect(given).toBeInstanceOf(TransactionOutcomeUnknownError);
    expect((given as Error).message).toContain('did not end within 20 ms');
    // The abandoned commit failing afterwards is no unhandled rejection (jest would fail).
    failLate(new Error('late'));
    await new Promise((r) => setImmediate(r));
  });

  it('passes a commit that ends in time through, value or failure', async () => {
    await expect(commitWithin(Promise.resolve(7), 1_000)).resolves.toBe(7);
    const fenced = new Error('fenced');
    await expect(commitWithin(Promise.reject(fenced), 1_000)).rejects.toBe(fenced);
  });
});

describe('isTransientKafkaFailure', () => {
  it('a refused connection is transient, bare or wrapped in kafkajs exhausted retries', () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
    expect(isTransientKafkaFailure(refused)).toBe(true);
    expect(
      isTransientKafkaFailure(
        new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 8, retryTime: 30_000 } as never),
      ),
    ).toBe(true);
    expect(isTransientKafkaFailure(protocolError('NOT_COORDINATOR', 16, true))).toBe(true);
  });

  it('a non-retriable protocol error, a setting error or a plain error is not', () => {
    const denied = protocolError('TOPIC_AUTHORIZATION_FAILED', 29);
    expect(isTransientKafkaFailure(denied)).toBe(false);
    expect(
      isTransientKafkaFailure(
        new KafkaJSNumberOfRetriesExceeded(denied, { retryCount: 8, retryTime: 30_000 } as never),
      ),
    ).toBe(false);
    expect(isTransientKafkaFailure(new KafkaJSNonRetriableError('no'))).toBe(false);
    expect(isTransientKafkaFailure(new ConfigError('CG_PARTITIONS: bad'))).toBe(false);
    expect(isTransientKafkaFailure(new Error('ECONNREFUSED'))).toBe(false);
  });
});

describe('a record the broker refuses as too large', () => {
  it.each([...TOO_LARGE_ERROR_TYPES])(
    'is recognised by type %s, bare or wrapped by the retrier',
    (type) => {
      const bare = protocolError(type, type === 'MESSAGE_TOO_LARGE' ? 10 : 18);
      expect(isRecordTooLarge(bare)).toBe(true);
      const exceeded = new KafkaJSNumberOfRetriesExceeded(bare, {
        retryCount: 0,
        retryTime: 1,
      } as never);
      expect(isRecordTooLarge(exceeded)).toBe(true);
    },
  );

  it('is not another protocol error, nor a message that says so', () => {
    expect(isRecordTooLarge(protocolError('NOT_LEADER_FOR_PARTITION', 6, true))).toBe(false);
    expect(isRecordTooLarge(new Error('MESSAGE_TOO_LARGE'))).toBe(false);
  });

  it('is RECORD_TOO_LARGE of the one error list: not retriable, never an exit status', () => {
    const e = new RecordTooLargeError(
      'dlq',
      [{ key: 'k', value: 'v' }],
      protocolError('MESSAGE_TOO_LARGE', 10),
    );
    expect(e.code).toBe('RECORD_TOO_LARGE');
    expect(isRetriable(e)).toBe(false);
    expect(ERROR_CODES.RECORD_TOO_LARGE).toEqual({
      retriable: false,
      exitCode: null,
      toolExitCode: null,
    });
    expect(e.message).toContain('1 record(s) for dlq');
  });
});
