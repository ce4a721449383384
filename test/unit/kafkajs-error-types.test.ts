/**
 * `classify` (src/kafka/kafkajs/errorTypes.ts) answers the project's code of a kafkajs failure
 * by class, protocol `type` and connection `code` anywhere in the cause chain, and by message
 * text only where kafkajs 2.2.4 gives nothing else; `causeMessages` (src/errors.ts) is the one
 * line of a chain's messages.
 */
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';
import { causeMessages } from '../../src/errors';
import { toolExitCode } from '../../src/cli/toolErrors';
import { classify } from '../../src/kafka/kafkajs';

const retried = (e: Error) =>
  new KafkaJSNumberOfRetriesExceeded(e, { retryCount: 0, retryTime: 1 });
const connection = (message: string, code?: string) =>
  new KafkaJSConnectionError(message, { broker: 'b:9092', ...(code ? { code } : {}) });
// kafkajs' typings leave out the constructors' arguments of these two.
const sasl = (message: string) =>
  new (KafkaJSSASLAuthenticationError as unknown as new (m: string) => Error)(message);
const nonRetriable = (e: Error) =>
  new (KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error)(e, {
    cause: e,
  });
const protocol = (type: string) =>
  new KafkaJSProtocolError({ type, code: 1, retriable: false, message: `${type}` } as never);

describe('classify', () => {
  it.each([
    ['a SASL error', sasl('SASL SCRAM: Invalid username')],
    ['a SASL error its retrier wrapped', nonRetriable(sasl('SASL PLAIN authentication failed'))],
    ['a SASL request that timed out', new Error('Request SaslAuthenticate(key: 36) timed out')],
  ])('%s is KAFKA_AUTHENTICATION_FAILED', (_, e) => {
    expect(classify(e)).toBe('KAFKA_AUTHENTICATION_FAILED');
  });

  it('a fencing or too-large protocol type, wrapped, is PRODUCER_FENCED or RECORD_TOO_LARGE', () => {
    const fenced = protocol('INVALID_PRODUCER_EPOCH');
    expect(classify(nonRetriable(fenced))).toBe('PRODUCER_FENCED');
    expect(classify(retried(protocol('MESSAGE_TOO_LARGE')))).toBe('RECORD_TOO_LARGE');
    expect(classify(new Error('producer fenced (INVALID_PRODUCER_EPOCH)'))).toBeNull();
  });

  it("a TLS failure by Node's code, or by its text when it has none", () => {
    const coded = connection('Connection error: x', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(classify(retried(coded))).toBe('KAFKA_TLS_FAILED');
    expect(classify(connection('Connection error: y', 'ERR_TLS_CERT_ALTNAME_INVALID'))).toBe(
      'KAFKA_TLS_FAILED',
    );
    // kafkajs#1058: what a retried TLS failure looks like.
    const text = connection('Connection error: 1:error:141A10F4:SSL routines:unexpected message');
    expect(classify(retried(text))).toBe('KAFKA_TLS_FAILED');
  });

  it('a broker that cannot be reached is KAFKA_UNREACHABLE, by class or by text', () => {
    const refused = connection(
      'Connection error: connect ECONNREFUSED 127.0.0.1:1',
      'ECONNREFUSED',
    );
    expect(classify(refused)).toBe('KAFKA_UNREACHABLE');
    expect(classify(retried(refused))).toBe('KAFKA_UNREACHABLE');
    expect(classify(retried(new Error('Connection timeout')))).toBe('KAFKA_UNREACHABLE');
    const named = new Error('whatever');
    named.name = 'KafkaJSConnectionError';
    expect(classify(named)).toBe('KAFKA_UNREACHABLE');
    expect(classify(new Error('getaddrinfo ENOTFOUND kafka'))).toBe('KAFKA_UNREACHABLE');
  });

  it('anything else is null', () => {
    expect(classify(new Error('boom'))).toBeNull();
    expect(classify(protocol('NOT_LEADER_FOR_PARTITION'))).toBeNull();
    expect(classify(null)).toBeNull();
    expect(classify('text')).toBeNull();
  });

  it("gives the on-call commands' exit status of a kafkajs failure", () => {
    expect(toolExitCode(retried(connection('Connection timeout')))).toBe(3);
    expect(toolExitCode(sasl('SASL PLAIN failed'))).toBe(3);
    expect(toolExitCode(protocol('INVALID_PRODUCER_EPOCH'))).toBeNull();
    expect(toolExitCode(new Error('boom'))).toBeNull();
  });
});

describe('causeMessages', () => {
  it("joins a chain's distinct messages, outermost first, at most 5", () => {
    const inner = new Error('inner');
    const middle = new Error('inner', { cause: inner });
    expect(causeMessages(new Error('outer', { cause: middle }))).toBe('outer: inner');
    let e: Error = new Error('m0');
    for (let i = 1; i < 8; i++) e = new Error(`m${i}`, { cause: e });
    expect(causeMessages(e)).toBe('m7: m6: m5: m4: m3');
  });

  it('stops at a cause that is not an Error, and at a cycle', () => {
    expect(causeMessages(new Error('a', { cause: { message: 'b' } }))).toBe('a');
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(causeMessages(b)).toBe('b: a');
  });
});
