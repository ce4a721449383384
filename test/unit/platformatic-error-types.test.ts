/**
 * src/kafka/platformatic/errorTypes.ts on the error objects @platformatic/kafka 2.12.1 itself
 * builds: a ProtocolError per refused request or partition, a ResponseError holding them with
 * the response, MultipleErrors around the attempts of a retried operation and around the
 * requests to several brokers (as its dist does: base.js kPerformWithRetry, producer.js
 * #performSend), and its NetworkError and TimeoutError.
 */
import {
  AuthenticationError,
  MultipleErrors,
  NetworkError,
  ProtocolError,
  ResponseError,
  TimeoutError,
} from '@platformatic/kafka';
import {
  errorTree,
  fencingErrorType,
  isGroupFencing,
  isRecordTooLarge,
  isTransientPlatformaticFailure,
  tooLargePartition,
} from '../../src/kafka/platformatic/errorTypes';
import { PRODUCER_FENCING_TYPES } from '../../src/kafka/transport/errors';

// Kafka's API keys: Produce 0, TxnOffsetCommit 28, EndTxn 26.
const PRODUCE = 0;
const TXN_OFFSET_COMMIT = 28;
const END_TXN = 26;

/** A retried operation that gave up, as kPerformWithRetry builds it. */
const retried = (operation: string, ...attempts: Error[]) =>
  new MultipleErrors(`${operation} failed ${attempts.length} times.`, attempts);

/** A produce to several leaders that failed, as #performSend builds it. */
const produced = (...failures: Error[]) =>
  new MultipleErrors('Producing messages failed.', failures);

/** A Produce response of two topics refusing `code` at topic 1, partition response 1. */
function produceRefusal(code: number): ResponseError {
  const response = {
    responses: [
      { name: 'verdicts', partitionResponses: [{ index: 0 }] },
      { name: 'changelog', partitionResponses: [{ index: 2 }, { index: 7 }] },
    ],
  };
  return new ResponseError(
    PRODUCE,
    11,
    { '/responses/1/partition_responses/1': [code, 'refused'] },
    response,
  );
}

describe('fencingErrorType', () => {
  it('finds PRODUCER_FENCED in an EndTxn response inside the attempts of a retried operation', () => {
    const e = retried(
      'endTransaction',
      new ProtocolError('CONCURRENT_TRANSACTIONS'),
      new ResponseError(END_TXN, 4, { '': [90, null] }, {}),
    );
    expect(fencingErrorType(e)).toBe('PRODUCER_FENCED');
  });

  it.each([...PRODUCER_FENCING_TYPES])('names %s as a fencing of the producer', (id) => {
    const type = fencingErrorType(produced(new ProtocolError(id)));
    expect(type).toBe(id);
    expect(isGroupFencing(type!)).toBe(false);
  });

  it.each([
    [22, 'ILLEGAL_GENERATION'],
    [25, 'UNKNOWN_MEMBER_ID'],
    [82, 'FENCED_INSTANCE_ID'],
  ])('names a TxnOffsetCommit refused with %i as the group fencing the member (%s)', (code, id) => {
    const e = retried(
      'commit',
      new ResponseError(TXN_OFFSET_COMMIT, 3, { '/topics/0/partitions/0': [code, null] }, {}),
    );
    expect(fencingErrorType(e)).toBe(id);
    expect(isGroupFencing(id)).toBe(true);
  });

  it('prefers a fencing of the producer to the group refusal when both are in the tree', () => {
    const e = produced(
      new ProtocolError('ILLEGAL_GENERATION'),
      new ProtocolError('PRODUCER_FENCED'),
    );
    expect(fencingErrorType(e)).toBe('PRODUCER_FENCED');
  });

  it('is null for what only needs a retry or a rejoin', () => {
    expect(fencingErrorType(retried('commit', new ProtocolError('NOT_COORDINATOR')))).toBeNull();
    expect(fencingErrorType(new ProtocolError('REBALANCE_IN_PROGRESS'))).toBeNull();
    expect(fencingErrorType(new NetworkError('Connection closed'))).toBeNull();
    expect(fencingErrorType(new Error('PRODUCER_FENCED'))).toBeNull();
  });
});

describe('isRecordTooLarge and tooLargePartition', () => {
  it.each([
    [10, 'MESSAGE_TOO_LARGE'],
    [18, 'RECORD_LIST_TOO_LARGE'],
  ])('finds error %i (%s) and the partition the response refused', (code) => {
    const e = produced(produceRefusal(code));
    expect(isRecordTooLarge(e)).toBe(true);
    expect(tooLargePartition(e)).toEqual({ topic: 'changelog', partition: 7 });
  });

  it('is false, and names no partition, for another refusal of the produce', () => {
    const e = produced(produceRefusal(19)); // NOT_ENOUGH_REPLICAS
    expect(isRecordTooLarge(e)).toBe(false);
    expect(tooLargePartition(e)).toBeNull();
  });

  it('names no partition for a refusal without the response it came in', () => {
    expect(isRecordTooLarge(new ProtocolError('MESSAGE_TOO_LARGE'))).toBe(true);
    expect(tooLargePartition(new ProtocolError('MESSAGE_TOO_LARGE'))).toBeNull();
  });
});

describe('isTransientPlatformaticFailure', () => {
  it.each([
    ['a dropped connection', new NetworkError('Connection closed')],
    [
      'a socket error under a network error',
      new NetworkError('x', { cause: new Error('ECONNREFUSED') }),
    ],
    ['a request that timed out', new TimeoutError('Request timed out')],
    ['NOT_COORDINATOR', new ProtocolError('NOT_COORDINATOR')],
    ['COORDINATOR_NOT_AVAILABLE', new ProtocolError('COORDINATOR_NOT_AVAILABLE')],
    ['COORDINATOR_LOAD_IN_PROGRESS', new ProtocolError('COORDINATOR_LOAD_IN_PROGRESS')],
    ['LEADER_NOT_AVAILABLE', new ProtocolError('LEADER_NOT_AVAILABLE')],
    ['NOT_LEADER_OR_FOLLOWER', new ProtocolError('NOT_LEADER_OR_FOLLOWER')],
    ['REQUEST_TIMED_OUT', new ProtocolError('REQUEST_TIMED_OUT')],
    ['BROKER_NOT_AVAILABLE', new ProtocolError('BROKER_NOT_AVAILABLE')],
  ])('is true for %s, inside the attempts of a retried operation', (_, error) => {
    expect(isTransientPlatformaticFailure(retried('metadata', error))).toBe(true);
  });

  it.each([
    ['a closed client', new NetworkError('Client is closed.', { canRetry: false, closed: true })],
    ['a failed authentication', new AuthenticationError('SASL failed')],
    ['TOPIC_AUTHORIZATION_FAILED', new ProtocolError('TOPIC_AUTHORIZATION_FAILED')],
    ['PRODUCER_FENCED', new ProtocolError('PRODUCER_FENCED')],
    ['INVALID_CONFIG', new ProtocolError('INVALID_CONFIG')],
    ['an error of another origin', new Error('boom')],
  ])('is false for %s', (_, error) => {
    expect(isTransientPlatformaticFailure(error)).toBe(false);
  });
});

it('errorTree visits every error of the tree once, a cycle included', () => {
  const inner = new ProtocolError('NOT_COORDINATOR');
  const outer = retried('commit', inner, inner);
  (inner as { cause?: unknown }).cause = outer;
  expect(errorTree(outer)).toEqual([outer, inner]);
});
