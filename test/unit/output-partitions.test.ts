import type { Message } from 'kafkajs';
import { pinPartitions, sendProblems } from '../../src/kafka/outputChunks';

describe('outputs pinned to partitions, and every pinned partition acknowledged (regression: issue 17)', () => {
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
});
