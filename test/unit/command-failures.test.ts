/**
 * How the commands other than `run` report a failure (src/cli/failures.ts): one line and the
 * on-call status (2 input or configuration, 3 cannot connect) for what a person can fix,
 * `simulate` naming the code as `run` does, and a stack with status 1 only for a bug.
 */
import { ConfigError } from '../../src/config/config';
import { StartupError } from '../../src/errors';
import {
  SIMULATE_FAILURES,
  TOOL_FAILURES,
  type FailureStyle,
  reportFailure,
} from '../../src/cli/failures';
import { ProcessorUnreachableError, UsageError } from '../../src/cli/toolErrors';

function report(command: string, e: unknown, style: FailureStyle) {
  let out = '';
  const status = reportFailure(command, e, style, false, (s) => (out += s));
  return { status, out };
}

const unreachable = new StartupError(
  'KAFKA_UNREACHABLE',
  'no Kafka broker answered at 127.0.0.1:1 in 8 s - check KAFKA_BROKERS (--brokers)',
);

describe('failures of the on-call commands', () => {
  it('are one sentence with the on-call status: 2 wrong input or settings, 3 cannot connect', () => {
    expect(report('inspect', new UsageError('--range: 8-0 is reversed'), TOOL_FAILURES)).toEqual({
      status: 2,
      out: 'compaction-guard inspect: --range: 8-0 is reversed\n',
    });
    expect(
      report('tail', new ConfigError('CG_PARTITIONS: expected an integer'), TOOL_FAILURES),
    ).toEqual({
      status: 2,
      out: 'compaction-guard tail: CG_PARTITIONS: expected an integer\n',
    });
    expect(
      report('inspect', new ProcessorUnreachableError('cannot reach'), TOOL_FAILURES).status,
    ).toBe(3);
    expect(report('acknowledge', unreachable, TOOL_FAILURES).status).toBe(3);
  });

  it("kafkajs' own connection failures (no code of ours) are status 3 too", () => {
    const e = new Error('Connection error: connect ECONNREFUSED 127.0.0.1:1');
    e.name = 'KafkaJSConnectionError';
    expect(report('tail', e, TOOL_FAILURES)).toEqual({
      status: 3,
      out: 'compaction-guard tail: Connection error: connect ECONNREFUSED 127.0.0.1:1\n',
    });
  });

  it('do not name the command twice when the message names it already', () => {
    const e = new ConfigError(
      'compaction-guard tail: no KAFKA_BROKERS and no running `npm start` found',
    );
    expect(report('tail', e, TOOL_FAILURES).out).toBe(
      'compaction-guard tail: no KAFKA_BROKERS and no running `npm start` found\n',
    );
  });

  it('anything unclassified is a bug: its stack and status 1', () => {
    const { status, out } = report('audit', new TypeError('x is not a function'), TOOL_FAILURES);
    expect(status).toBe(1);
    expect(out).toMatch(/^compaction-guard audit: TypeError: x is not a function\n\s+at /);
  });
});

describe('failures of simulate', () => {
  it('an absent broker is status 3 (as its help says), one line naming the code, never 1 with a stack', () => {
    expect(report('simulate', unreachable, SIMULATE_FAILURES)).toEqual({
      status: 3,
      out: 'compaction-guard simulate: no Kafka broker answered at 127.0.0.1:1 in 8 s - check KAFKA_BROKERS (--brokers) [KAFKA_UNREACHABLE, retriable]\n',
    });
  });

  it('does not name itself twice when the message names it already', () => {
    const e = new ConfigError(
      'compaction-guard simulate: no KAFKA_BROKERS and no running `npm start` found',
    );
    expect(report('simulate', e, SIMULATE_FAILURES).out).toBe(
      'compaction-guard simulate: invalid configuration: no KAFKA_BROKERS and no running `npm start` found [CONFIG_INVALID]\n',
    );
  });

  it('a setting or option is status 2, read as an invalid configuration', () => {
    expect(
      report('simulate', new ConfigError('--rate: expected a positive number'), SIMULATE_FAILURES),
    ).toEqual({
      status: 2,
      out: 'compaction-guard simulate: invalid configuration: --rate: expected a positive number [CONFIG_INVALID]\n',
    });
  });
});
