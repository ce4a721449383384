import fc from 'fast-check';
import type { TopicMessages } from 'kafkajs';
import { partitionsOf, unsentMessages } from '../../src/kafka/kafkajs/checkedSend';
import type { SentPartition } from '../../src/kafka/kafkajs/partitionPerRequest';

const ack = (topicName: string, partition: number): SentPartition => ({ topicName, partition });
const values = (r: readonly TopicMessages[]) =>
  r.map(({ topic, messages }) => [topic, messages.map((m) => String(m.value))]);

describe('which messages of a plain send are still unsent (kafkajs#1303 on input producers)', () => {
  const request: TopicMessages[] = [
    {
      topic: 'input',
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 2 },
        { value: 'c', partition: 0 },
        { value: 'd', partition: 2 },
        { value: 'e', partition: 1 },
      ],
    },
  ];

  it('selects every message of a partition no result acknowledges, in order, and nothing else', () => {
    // The retry skipped the broker that now leads input/2.
    const r = unsentMessages(request, [ack('input', 0), ack('input', 1)]);
    expect(values(r.unsent)).toEqual([['input', ['b', 'd']]]);
    expect(r.repeated).toEqual([]);
    expect(partitionsOf(r.unsent)).toEqual(['input/2']);
  });

  it('selects nothing when every partition is acknowledged, and names one acknowledged twice', () => {
    const r = unsentMessages(request, [
      ack('input', 0),
      ack('input', 2),
      ack('input', 1),
      ack('input', 0),
    ]);
    expect(r.unsent).toEqual([]);
    expect(r.repeated).toEqual(['input/0']);
  });

  it('tells topics apart: the same partition number of another topic does not acknowledge it', () => {
    const two: TopicMessages[] = [
      { topic: 'input', messages: [{ value: 'x', partition: 1 }] },
      { topic: 'other', messages: [{ value: 'y', partition: 1 }] },
    ];
    expect(values(unsentMessages(two, [ack('other', 1)]).unsent)).toEqual([['input', ['x']]]);
  });

  it('never selects an unpinned message (its partition cannot be checked)', () => {
    const r = unsentMessages([{ topic: 'input', messages: [{ value: 'u' }] }], []);
    expect(r.unsent).toEqual([]);
  });

  // Requests of 1-3 topics, messages numbered in order with a partition 0-3 each.
  const requests = fc
    .array(
      fc.tuple(
        fc.constantFrom('input', 'events', 'other'),
        fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 30 }),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((topics) => {
      let n = 0;
      return topics.map(([topic, partitions]): TopicMessages => ({
        topic,
        messages: partitions.map((partition) => ({ value: String(n++), partition })),
      }));
    });

  it('property: unsent is exactly the messages of unacknowledged partitions, in request order; repeated is exactly those acknowledged more than once', () => {
    fc.assert(
      fc.property(
        requests,
        fc.array(fc.nat({ max: 2 }), { minLength: 12, maxLength: 12 }),
        fc.nat(),
        (request, times, seed) => {
          const keys = partitionsOf(request);
          const count = new Map(keys.map((k, i) => [k, times[i % times.length]!]));
          const results = keys.flatMap((k) => {
            const [topic, p] = k.split('/');
            return Array.from({ length: count.get(k)! }, () => ack(topic!, Number(p)));
          });
          // The order of kafkajs' results is the brokers' answers': any.
          const shuffled = results
            .map((r, i) => ({ r, o: (seed * (i + 7)) % 101 }))
            .sort((a, b) => a.o - b.o)
            .map((x) => x.r);
          const { unsent, repeated } = unsentMessages(request, shuffled);
          const expected = request
            .map(({ topic, messages }) => ({
              topic,
              messages: messages.filter((m) => count.get(`${topic}/${m.partition}`) === 0),
            }))
            .filter((t) => t.messages.length > 0);
          expect(values(unsent)).toEqual(values(expected));
          expect(repeated.sort()).toEqual(keys.filter((k) => count.get(k)! > 1).sort());
        },
      ),
    );
  });

  it('property: re-sending the unsent until all are acknowledged sends each message once, and each partition in its order before anything newer', () => {
    fc.assert(
      fc.property(
        requests,
        fc.array(fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), { maxLength: 6 }),
        (request, rounds) => {
          // Per round, which carried partitions the brokers acknowledge; the last round all.
          const written = new Map<string, string[]>();
          let pending = request;
          for (let round = 0; pending.length > 0; round++) {
            const carried = partitionsOf(pending);
            const acked = carried.filter((_, i) => rounds[round]?.[i] ?? true);
            const { unsent } = unsentMessages(
              pending,
              acked.map((k) => ack(k.split('/')[0]!, Number(k.split('/')[1]))),
            );
            for (const { topic, messages } of pending)
              for (const m of messages) {
                const key = `${topic}/${m.partition}`;
                if (acked.includes(key))
                  written.set(key, [...(written.get(key) ?? []), String(m.value)]);
              }
            pending = unsent;
          }
          // Every partition's log holds its messages once each, in the order they were given.
          for (const key of partitionsOf(request)) {
            const [topic, p] = key.split('/');
            const given = request
              .filter((t) => t.topic === topic)
              .flatMap((t) => t.messages.filter((m) => m.partition === Number(p)))
              .map((m) => String(m.value));
            expect(written.get(key)).toEqual(given);
          }
        },
      ),
    );
  });
});
