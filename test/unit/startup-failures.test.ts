/**
 * Start-up failures: each expected one is one line with its code and a documented exit status
 * (src/errors.ts); kafkajs' logs follow CG_LOG_LEVEL and its expected retries are debug lines.
 */
import { logLevel } from 'kafkajs';
import { ConfigError } from '../../src/config/config';
import { STARTUP_FAILURES, StartupError, exitCodeHelp } from '../../src/errors';
import { RUN_FAILURES, classifyStartupFailure, reportFailure } from '../../src/cli/failures';
import { KafkaSecurityError } from '../../src/kafka/client';
import { kafkajsEntryLevel, kafkajsLogLevel } from '../../src/kafka/kafkajs/logLevels';
import { RegistryAuthError } from '../../src/registry/codec';
import { buildProgram } from '../../src/cli/main';

function report(e: unknown, debug = false): { status: number; out: string } {
  let out = '';
  const status = reportFailure('run', e, RUN_FAILURES, debug, (s) => (out += s));
  return { status, out };
}

describe('start-up failures', () => {
  it('are one line naming the code, with the exit status of their code and no stack', () => {
    const e = new StartupError(
      'KAFKA_UNREACHABLE',
      'no Kafka broker answered at h:1 - check KAFKA_BROKERS',
    );
    const { status, out } = report(e);
    expect(status).toBe(4);
    expect(out).toBe(
      'compaction-guard run: no Kafka broker answered at h:1 - check KAFKA_BROKERS [KAFKA_UNREACHABLE, retriable]\n',
    );
  });

  it('show the cause stack only at debug level', () => {
    const cause = new Error('connect ECONNREFUSED');
    const { out } = report(new StartupError('REGISTRY_UNREACHABLE', 'x', { cause }), true);
    expect(out.split('\n')[1]).toBe('Error: connect ECONNREFUSED');
    expect(out).toContain('startup-failures.test.ts');
  });

  it('map the older error classes to their codes and statuses (2 config, 3 credentials)', () => {
    expect(report(new ConfigError('CG_PARTITIONS: expected an integer')).status).toBe(2);
    expect(report(new ConfigError('CG_PARTITIONS: expected an integer')).out).toBe(
      'compaction-guard run: invalid configuration: CG_PARTITIONS: expected an integer [CONFIG_INVALID]\n',
    );
    expect(classifyStartupFailure(new RegistryAuthError('HTTP 401'))?.code).toBe(
      'REGISTRY_AUTH_FAILED',
    );
    expect(
      report(new KafkaSecurityError('bad password', 'KAFKA_AUTHENTICATION_FAILED')).status,
    ).toBe(3);
  });

  it('treat anything unclassified as a bug: status 1 and its stack', () => {
    const { status, out } = report(new TypeError('undefined is not a function'));
    expect(status).toBe(1);
    expect(out).toMatch(/^compaction-guard run: TypeError: undefined is not a function\n\s+at /);
  });

  it('are all listed with their status in run --help', () => {
    let help = '';
    const run = buildProgram().commands.find((c) => c.name() === 'run')!;
    run.configureOutput({ writeOut: (s) => (help += s) });
    run.outputHelp();
    expect(help).toContain(exitCodeHelp());
    for (const [code, { exitCode }] of Object.entries(STARTUP_FAILURES))
      expect(help).toMatch(new RegExp(`^  ${exitCode}  .*\\b${code}\\b`, 'm'));
  });

  it('have distinct statuses except for the credential family (3), none 0 or 1', () => {
    const statuses = Object.entries(STARTUP_FAILURES).map(([, v]) => v.exitCode);
    expect(statuses.every((s) => s >= 2 && s <= 125)).toBe(true);
    const credentials = ['KAFKA_AUTHENTICATION_FAILED', 'KAFKA_TLS_FAILED', 'REGISTRY_AUTH_FAILED'];
    const others = Object.entries(STARTUP_FAILURES).filter(([c]) => !credentials.includes(c));
    expect(new Set(others.map(([, v]) => v.exitCode)).size).toBe(others.length);
  });
});

describe('kafkajs logs', () => {
  it('follow CG_LOG_LEVEL (kafkajs INFO is its chatter: debug, so not built at info)', () => {
    expect(kafkajsLogLevel('debug')).toBe(logLevel.DEBUG);
    expect(kafkajsLogLevel('info')).toBe(logLevel.WARN);
    expect(kafkajsEntryLevel(logLevel.INFO, { message: 'Pausing fetching from 1 topics' })).toBe(
      'debug',
    );
    expect(kafkajsLogLevel('warn')).toBe(logLevel.WARN);
    expect(kafkajsLogLevel('error')).toBe(logLevel.ERROR);
    expect(kafkajsLogLevel('silent')).toBe(logLevel.NOTHING);
  });

  it('log the CONCURRENT_TRANSACTIONS retry of a healthy run at debug, not error', () => {
    // The entry exactly as kafkajs 2.2.4's Connection logs it (message and error text).
    const entry = {
      message: 'Response AddPartitionsToTxn(key: 24, version: 1)',
      error:
        'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing',
    };
    expect(kafkajsEntryLevel(logLevel.ERROR, entry)).toBe('debug');
  });

  it("log a fresh broker's or a moving coordinator's retried answers at debug, not error", () => {
    // As kafkajs 2.2.4 logs the first FindCoordinator of `npm start` on a new broker.
    for (const error of [
      'The group coordinator is not available',
      "The coordinator is loading and hence can't process requests for this group",
    ])
      expect(
        kafkajsEntryLevel(logLevel.ERROR, {
          message: 'Response GroupCoordinator(key: 10, version: 2)',
          error,
        }),
      ).toBe('debug');
  });

  it('keep other errors and warnings at their level', () => {
    const entry = {
      message: 'Response Produce(key: 0, version: 7)',
      error: 'Broker not available',
    };
    expect(kafkajsEntryLevel(logLevel.ERROR, entry)).toBe('error');
    expect(
      kafkajsEntryLevel(logLevel.WARN, { message: 'Crash: KafkaJSNumberOfRetriesExceeded' }),
    ).toBe('warn');
  });
});
