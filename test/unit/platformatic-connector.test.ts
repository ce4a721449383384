/**
 * The pure parts of the client library's connector on @platformatic/kafka
 * (src/kafka/platformatic/connector.ts): where a topic consumer's partition starts, which
 * partitions a send's answers acknowledged, the input producer's retry delays, and the
 * project's code of the library's own failures (as its dist builds them).
 */
import {
  AuthenticationError,
  MultipleErrors,
  NetworkError,
  ProtocolError,
  TimeoutError,
} from '@platformatic/kafka';
import { classifyPlatformaticFailure } from '../../src/kafka/platformatic/errorTypes';
import { connectorBase } from '../../src/kafka/platformatic/connector';
import { acknowledgedBy } from '../../src/kafka/platformatic/plainProducer';
import { doublingRetryDelay } from '../../src/kafka/platformatic/retryDelay';
import { startPosition } from '../../src/kafka/platformatic/topicConsumer';
import pino from 'pino';

describe('startPosition: where a newly assigned partition is read from', () => {
  const at = { committed: -1n, low: 5n, high: 42n };

  it('a partition the group never committed starts at its earliest record from the beginning, else at its end', () => {
    expect(startPosition(at, true)).toBe(5n);
    expect(startPosition(at, false)).toBe(42n);
  });

  it("the group's committed offset wins over both ends", () => {
    expect(startPosition({ ...at, committed: 17n }, true)).toBe(17n);
    expect(startPosition({ ...at, committed: 17n }, false)).toBe(17n);
  });
});

describe('acknowledgedBy', () => {
  it("reads the topic-partitions of the library's produce result, one per partition answer", () => {
    const result = {
      offsets: [
        { topic: 'input', partition: 2, offset: 10n },
        { topic: 'input', partition: 0, offset: 4n },
      ],
    };
    expect(acknowledgedBy(result)).toEqual([
      { topic: 'input', partition: 2 },
      { topic: 'input', partition: 0 },
    ]);
  });

  it('a result without offsets acknowledges nothing (everything is sent again)', () => {
    expect(acknowledgedBy({})).toEqual([]);
  });
});

describe("the input producer's retry delay", () => {
  it("doubles from 200 ms up to 5 s, as kafkajs' retry of the input producer", () => {
    const delay = doublingRetryDelay(200, 5_000);
    const error = new Error('x');
    const delays = [1, 2, 3, 4, 5, 6, 9].map((attempt) =>
      delay({}, 'send', attempt, Infinity, error),
    );
    expect(delays).toEqual([200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
  });
});

describe('classifyPlatformaticFailure', () => {
  it('a refused SASL exchange is an authentication failure, wherever in the tree', () => {
    const e = new MultipleErrors('Connecting failed.', [
      new AuthenticationError('SASL authentication failed.'),
    ]);
    expect(classifyPlatformaticFailure(e)).toBe('KAFKA_AUTHENTICATION_FAILED');
    expect(classifyPlatformaticFailure(new ProtocolError('SASL_AUTHENTICATION_FAILED'))).toBe(
      'KAFKA_AUTHENTICATION_FAILED',
    );
  });

  it("a certificate the CA does not verify is TLS, by Node's code on the socket's error", () => {
    const socket = Object.assign(new Error('self-signed certificate'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    const e = new NetworkError('Connection to 127.0.0.1:9093 failed.', { cause: socket });
    expect(classifyPlatformaticFailure(e)).toBe('KAFKA_TLS_FAILED');
  });

  it('a refused connection or a timeout is a broker not reached', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(
      classifyPlatformaticFailure(
        new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: refused }),
      ),
    ).toBe('KAFKA_UNREACHABLE');
    expect(
      classifyPlatformaticFailure(new TimeoutError('Connection to 127.0.0.1:1 timed out.')),
    ).toBe('KAFKA_UNREACHABLE');
  });

  it('a fenced producer and a record too large keep their codes', () => {
    expect(classifyPlatformaticFailure(new ProtocolError('PRODUCER_FENCED'))).toBe(
      'PRODUCER_FENCED',
    );
    expect(classifyPlatformaticFailure(new ProtocolError('MESSAGE_TOO_LARGE'))).toBe(
      'RECORD_TOO_LARGE',
    );
  });

  it('an error of anything else is none of them', () => {
    expect(classifyPlatformaticFailure(new Error('registry said no'))).toBeNull();
    expect(classifyPlatformaticFailure(new ProtocolError('TOPIC_AUTHORIZATION_FAILED'))).toBeNull();
  });
});

describe('connectorBase', () => {
  it("takes the connection's client id, brokers and retries, plaintext when no security is given", () => {
    const base = connectorBase({
      brokers: ['a:9092', 'b:9092'],
      clientId: 'cg-tail',
      log: pino({ level: 'silent' }),
      retries: 2,
    });
    expect(base).toMatchObject({
      clientId: 'cg-tail',
      bootstrapBrokers: ['a:9092', 'b:9092'],
      retries: 2,
    });
    expect(base).not.toHaveProperty('tls');
    expect(base).not.toHaveProperty('sasl');
  });
});
