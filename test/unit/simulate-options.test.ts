/** `simulate`'s options are validated like `run`'s, and its events do not lie about time or identity. */
import { ConfigError } from '../../src/config/config';
import { freshSessionPrefix, parseSimulateOptions } from '../../src/cli/simulateOptions';
import { stampNow } from '../../src/cli/simulate';
import { generateFleet } from '../../src/sim';

/** commander's defaults, as `simulate` receives them. */
const DEFAULTS = {
  sessions: '200',
  events: '100000',
  seed: '1',
  rate: '2000',
  faultyShare: '0.1',
  spillAck: true,
  format: 'avro',
};

const parse = (over: Record<string, string | boolean | undefined>) =>
  parseSimulateOptions({ ...DEFAULTS, ...over });

describe('simulate options', () => {
  it('parses the defaults', () => {
    const o = parse({});
    expect(o).toMatchObject({
      sessions: 200,
      events: 100000,
      seed: 1,
      rate: 2000,
      faultyShare: 0.1,
      spillAck: true,
      format: 'avro',
      replay: false,
    });
  });

  it.each([
    ['format', 'protobuf', '--format: expected avro or json, got "protobuf"'],
    ['format', 'JSON', '--format: expected avro or json, got "JSON"'],
    ['faultyShare', 'lots', '--faulty-share: expected a number from 0 to 1, got "lots"'],
    ['faultyShare', '1.5', '--faulty-share: expected a number from 0 to 1, got "1.5"'],
    ['seed', '-1', '--seed: expected an integer from 0 to 4294967295, got "-1"'],
    ['seed', '1.5', '--seed: expected an integer from 0 to 4294967295, got "1.5"'],
    ['sessions', '0', '--sessions: expected an integer from 1 to'],
    ['events', '', '--events: expected an integer from 1 to'],
    ['rate', '0', '--rate: expected a positive number, got "0"'],
    ['sessionPrefix', 'a b', '--session-prefix: expected 1 to 64 letters'],
  ])('rejects --%s %j with a message naming the flag', (key, value, message) => {
    expect(() => parse({ [key]: value })).toThrow(ConfigError);
    expect(() => parse({ [key]: value })).toThrow(message);
  });

  it('accepts --seed 0 and the ends of --faulty-share', () => {
    expect(parse({ seed: '0' }).seed).toBe(0);
    expect(parse({ faultyShare: '0' }).faultyShare).toBe(0);
    expect(parse({ faultyShare: '1' }).faultyShare).toBe(1);
    expect(parse({ format: 'json' }).format).toBe('json');
  });

  it('gives each run its own session prefix unless --session-prefix is given', () => {
    const a = parse({}).sessionPrefix;
    const b = parse({}).sessionPrefix;
    expect(a).not.toBe(b);
    expect(a).toMatch(/^sim-[0-9a-z]+$/);
    expect(parse({ sessionPrefix: 'demo' }).sessionPrefix).toBe('demo');
    // The same instant still differs by its random part.
    expect(freshSessionPrefix(1_000)).not.toBe(freshSessionPrefix(1_000));
  });

  it('gives two runs with the same seed disjoint session ids', () => {
    const ids = (prefix: string) =>
      new Set(
        [...generateFleet({ sessions: 20, events: 500, seed: 1, sessionPrefix: prefix })].map(
          (e) => e.sessionId,
        ),
      );
    const first = ids(parse({}).sessionPrefix);
    const second = ids(parse({}).sessionPrefix);
    expect([...first].filter((id) => second.has(id))).toEqual([]);
  });
});

describe('simulate stamps', () => {
  it('replace the model clock by the send time', () => {
    const [event] = [...generateFleet({ sessions: 1, events: 1, seed: 3 })];
    const stamped = stampNow(event!, 1_800_000_000_123);
    expect(stamped.occurredAt).toBe(1_800_000_000_123);
    expect({ ...stamped, occurredAt: event!.occurredAt }).toEqual(event);
  });
});
