import fc from 'fast-check';
import type { Message } from 'kafkajs';
import { estimatedBytes, outputRequests, REQUEST_BUDGET_BYTES } from '../../src/kafka/outputChunks';

const msg = (key: string, bytes: number): Message => ({ key, value: Buffer.alloc(bytes) });
const requestBytes = (r: { messages: Message[] }[]) =>
  r.reduce((n, t) => n + t.messages.reduce((k, m) => k + estimatedBytes(m), 0), 0);

describe('outputRequests', () => {
  it('keeps small outputs in one request, topics and order unchanged', () => {
    const outputs = [
      ['verdicts', [msg('a', 10), msg('b', 20)]],
      ['state', [msg('a', 50)]],
    ] as const;
    expect(outputRequests(outputs)).toEqual([
      [
        { topic: 'verdicts', messages: [outputs[0][1][0], outputs[0][1][1]] },
        { topic: 'state', messages: [outputs[1][1][0]] },
      ],
    ]);
  });

  it('splits 16k changelog records of ~80 B (1.3 MB, over message.max.bytes) into requests under the budget', () => {
    const states = Array.from({ length: 16_000 }, (_, i) => msg(`s-${i}`, 50));
    const requests = outputRequests([['state', states]]);
    expect(requests.length).toBe(2);
    for (const r of requests) expect(requestBytes(r)).toBeLessThanOrEqual(REQUEST_BUDGET_BYTES);
    expect(requests.flatMap((r) => r.flatMap((t) => t.messages))).toEqual(states);
  });

  it('puts a message larger than the budget alone in its request', () => {
    const big = msg('big', 2_000);
    expect(outputRequests([['t', [msg('a', 10), big, msg('b', 10)]]], 1_000)).toEqual([
      [{ topic: 't', messages: [expect.objectContaining({ key: 'a' })] }],
      [{ topic: 't', messages: [big] }],
      [{ topic: 't', messages: [expect.objectContaining({ key: 'b' })] }],
    ]);
  });

  it('counts keys, values and headers', () => {
    const m: Message = { key: 'k', value: 'vv', headers: { h: Buffer.from('123'), x: ['a', 'b'] } };
    expect(estimatedBytes(m) - estimatedBytes({ key: null, value: null })).toBe(
      1 + 2 + 3 + 3 + 2 + 3,
    );
  });

  it('property: every message once, per topic in order, each request within budget unless a lone message', () => {
    const outputs = fc.array(
      fc.tuple(
        fc.constantFrom('verdicts', 'spills', 'audit', 'state'),
        fc.array(fc.nat({ max: 600 }), { maxLength: 40 }),
      ),
      { maxLength: 5 },
    );
    fc.assert(
      fc.property(outputs, fc.integer({ min: 100, max: 3_000 }), (spec, budget) => {
        let id = 0;
        const input = spec.map(
          ([topic, sizes]) => [topic, sizes.map((n) => msg(String(id++), n))] as const,
        );
        const requests = outputRequests(input, budget);
        const flat = requests.flatMap((r) =>
          r.flatMap((t) => t.messages.map((m) => [t.topic, m] as const)),
        );
        expect(flat).toEqual(input.flatMap(([t, ms]) => ms.map((m) => [t, m] as const)));
        for (const r of requests) {
          const count = r.reduce((n, t) => n + t.messages.length, 0);
          expect(count).toBeGreaterThan(0);
          if (count > 1) expect(requestBytes(r)).toBeLessThanOrEqual(budget);
        }
      }),
    );
  });
});
