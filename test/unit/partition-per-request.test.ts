import fc from 'fast-check';
import type { Message, TopicMessages } from 'kafkajs';
import { onePartitionEach, sendProblems } from '../../src/kafka/kafkajs/partitionPerRequest';
import { pinPartitions } from '../../src/kafka/placement';

describe('outputs pinned to partitions, and every pinned partition acknowledged (regression: kafkajs#1303)', () => {
  it("pins a keyed message where Kafka's Java client would put it (murmur2), keeps given partitions", () => {
    const verdicts: Message[] = ['sim-a-1', 'sess-42', 'cg-seed'].map((key) => ({
      key,
      value: 'v',
    }));
    const changelog: Message[] = [{ key: 'sess-42', value: 's', partition: 4 }];
    pinPartitions(
      [
        ['verdicts', verdicts],
        ['changelog', changelog],
        ['unknown-size', [{ key: 'x', value: 'y' }]],
      ],
      new Map([
        ['verdicts', 6],
        ['changelog', 6],
      ]),
    );
    // Printed by org.apache.kafka.common.utils.Utils: toPositive(murmur2(key)) % 6, Kafka 4.4.0.
    expect(verdicts.map((m) => m.partition)).toEqual([0, 5, 1]);
    expect(changelog[0]!.partition).toBe(4);
  });

  it('names the topic-partitions the send results leave out, and those they acknowledge twice', () => {
    const request = [
      {
        topic: 'verdicts',
        messages: [
          { value: 'a', partition: 0 },
          { value: 'b', partition: 2 },
        ],
      },
      { topic: 'changelog', messages: [{ value: 'c', partition: 1 }] },
    ];
    // kafkajs' retry skipped the broker that now leads verdicts/2: no result for it.
    expect(
      sendProblems(request, [
        { topicName: 'verdicts', partition: 0 },
        { topicName: 'changelog', partition: 1 },
      ]),
    ).toEqual({ missing: ['verdicts/2'], repeated: [] });
    // Its retry sent verdicts/0 again to the broker that leads it now: written twice.
    expect(
      sendProblems(request, [
        { topicName: 'verdicts', partition: 0 },
        { topicName: 'verdicts', partition: 2 },
        { topicName: 'changelog', partition: 1 },
        { topicName: 'verdicts', partition: 0 },
      ]),
    ).toEqual({ missing: [], repeated: ['verdicts/0'] });
    expect(
      sendProblems(request, [
        { topicName: 'verdicts', partition: 0 },
        { topicName: 'verdicts', partition: 2 },
        { topicName: 'changelog', partition: 1 },
      ]),
    ).toEqual({ missing: [], repeated: [] });
  });

  it("splits a request into one request per topic-partition, each in its messages' order", () => {
    const request: TopicMessages[] = [
      {
        topic: 'verdicts',
        messages: [
          { value: 'a', partition: 0 },
          { value: 'b', partition: 2 },
          { value: 'c', partition: 0 },
        ],
      },
      { topic: 'spills', messages: [{ value: 'd', partition: 0 }] },
    ];
    expect(onePartitionEach(request)).toEqual([
      [{ topic: 'verdicts', messages: [request[0]!.messages[0], request[0]!.messages[2]] }],
      [{ topic: 'verdicts', messages: [request[0]!.messages[1]] }],
      [{ topic: 'spills', messages: [request[1]!.messages[0]] }],
    ]);
  });

  it('one partition per request: every message kept once, in order within its topic-partition (property)', () => {
    const message = fc.record({ value: fc.string(), partition: fc.nat(3) });
    const request = fc.array(
      fc.record({ topic: fc.constantFrom('a', 'b', 'c'), messages: fc.array(message) }),
    );
    fc.assert(
      fc.property(request, (req) => {
        const parts = onePartitionEach(req);
        const seqOf = (r: readonly TopicMessages[], key: string) =>
          r.flatMap((t) => t.messages.filter((m) => `${t.topic}/${m.partition}` === key));
        const keys = new Set(
          req.flatMap((t) => t.messages.map((m) => `${t.topic}/${m.partition}`)),
        );
        for (const part of parts) {
          expect(part).toHaveLength(1);
          expect(new Set(part[0]!.messages.map((m) => m.partition)).size).toBe(1);
          expect(part[0]!.messages.length).toBeGreaterThan(0);
        }
        expect(parts).toHaveLength(keys.size);
        for (const key of keys) expect(seqOf(parts.flat(), key)).toEqual(seqOf(req, key));
      }),
    );
  });
});
