/**
 * src/kafka/acknowledgedSend.ts: the plain send of input events that every client's producer
 * goes through, driven with a fake produce request whose answers leave partitions out or
 * acknowledge them twice.
 */
import fc from 'fast-check';
import {
  type Acknowledged,
  acknowledgementProblems,
  sendUntilAcknowledged,
  UnacknowledgedSendError,
  unacknowledgedMessages,
} from '../../src/kafka/acknowledgedSend';
import { defaultPartition } from '../../src/kafka/placement';
import type { TopicRecords } from '../../src/kafka/transport/records';

// The pause before a re-send is the real one's business, not this test's.
jest.mock('../../src/time', () => ({
  ...jest.requireActual<typeof import('../../src/time')>('../../src/time'),
  sleep: async () => undefined,
}));

const WORDS = { repeated: 'twice', resending: 'again', why: 'the fake dropped them' };
const values = (r: readonly TopicRecords[]) =>
  r.map(({ topic, messages }) => [topic, messages.map((m) => String(m.value))]);
const quiet = () => ({ warn: jest.fn() });

/** Every partition a request carries, acknowledged once. */
const allOf = (request: readonly TopicRecords[]): Acknowledged[] => {
  const seen = new Map<string, Acknowledged>();
  for (const { topic, messages } of request)
    for (const m of messages)
      seen.set(`${topic}/${m.partition}`, { topic, partition: m.partition! });
  return [...seen.values()];
};

describe('which partitions of a produce request no answer acknowledged', () => {
  const request: TopicRecords[] = [
    {
      topic: 'input',
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 2 },
        { value: 'c', partition: 0 },
      ],
    },
  ];

  it('names a partition without an answer as missing and one answered twice as repeated', () => {
    const acked = [
      { topic: 'input', partition: 0 },
      { topic: 'input', partition: 0 },
    ];
    expect(acknowledgementProblems(request, acked)).toEqual({
      missing: ['input/2'],
      repeated: ['input/0'],
    });
  });

  it("selects a missing partition's messages whole and in order, and nothing of the others", () => {
    const r = unacknowledgedMessages(request, [{ topic: 'input', partition: 2 }]);
    expect(values(r.unsent)).toEqual([['input', ['a', 'c']]]);
  });

  it('an answer for the same partition number of another topic acknowledges nothing here', () => {
    const r = unacknowledgedMessages(request, [
      { topic: 'other', partition: 0 },
      { topic: 'other', partition: 2 },
    ]);
    expect(values(r.unsent)).toEqual([['input', ['a', 'b', 'c']]]);
  });
});

describe('sendUntilAcknowledged', () => {
  const counts = new Map([['input', 4]]);

  it('pins every record where Kafka’s default partitioner puts it before the first send', async () => {
    const request: TopicRecords[] = [
      { topic: 'input', messages: ['s1', 's2', 's3'].map((key) => ({ key, value: key })) },
    ];
    const sent: TopicRecords[][] = [];
    await sendUntilAcknowledged(
      request,
      async (r) => {
        sent.push(r);
        return allOf(r);
      },
      WORDS,
      { partitionCounts: counts, log: quiet() },
    );
    expect(sent).toHaveLength(1);
    for (const m of sent[0]![0]!.messages)
      expect(m.partition).toBe(defaultPartition('input', 4, { key: m.key!, value: null }));
  });

  it('sends again, whole, the partitions an answer left out, then resolves (two rounds)', async () => {
    const request: TopicRecords[] = [
      {
        topic: 'input',
        messages: [
          { value: 'a', partition: 0 },
          { value: 'b', partition: 1 },
          { value: 'c', partition: 1 },
        ],
      },
    ];
    const sent: TopicRecords[][] = [];
    const log = quiet();
    const report = await sendUntilAcknowledged(
      request,
      async (r) => {
        sent.push(r);
        // The first answer leaves input/1 out.
        return sent.length === 1 ? [{ topic: 'input', partition: 0 }] : allOf(r);
      },
      WORDS,
      { partitionCounts: counts, log },
    );
    expect(report).toEqual({ rounds: 2, repeated: [] });
    expect(values(sent[1]!)).toEqual([['input', ['b', 'c']]]);
    expect(log.warn).toHaveBeenCalledWith({ partitions: ['input/1'], round: 1 }, 'again');
  });

  it('reports a partition acknowledged twice at warn without failing the send', async () => {
    const log = quiet();
    const report = await sendUntilAcknowledged(
      [{ topic: 'input', messages: [{ value: 'a', partition: 3 }] }],
      async (r) => [...allOf(r), ...allOf(r)],
      WORDS,
      { partitionCounts: counts, log },
    );
    expect(report).toEqual({ rounds: 1, repeated: ['input/3'] });
    expect(log.warn).toHaveBeenCalledWith({ partitions: ['input/3'], round: 1 }, 'twice');
  });

  it('gives up after maxRounds with UnacknowledgedSendError holding what is still unsent', async () => {
    const send = jest.fn(async () => [] as Acknowledged[]);
    const failure = await sendUntilAcknowledged(
      [{ topic: 'input', messages: [{ value: 'a', partition: 2 }] }],
      send,
      WORDS,
      { partitionCounts: counts, log: quiet(), maxRounds: 2 },
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnacknowledgedSendError);
    const e = failure as UnacknowledgedSendError;
    expect(e.partitions).toEqual(['input/2']);
    expect(values(e.unsent)).toEqual([['input', ['a']]]);
    expect(e.message).toContain('the fake dropped them');
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('refuses a topic without a partition count before anything is sent', async () => {
    const send = jest.fn(async () => [] as Acknowledged[]);
    await expect(
      sendUntilAcknowledged([{ topic: 'unknown', messages: [{ value: 'a' }] }], send, WORDS, {
        partitionCounts: counts,
        log: quiet(),
      }),
    ).rejects.toThrow('no partition count for topic unknown');
    expect(send).not.toHaveBeenCalled();
  });

  it('whatever the answers drop, every record is acknowledged exactly in its partition order once it resolves', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        async (partitions, drops) => {
          const request: TopicRecords[] = [
            {
              topic: 'input',
              messages: partitions.map((p, i) => ({ value: `${i}`, partition: p })),
            },
          ];
          // What each partition holds, as a broker that writes what it acknowledges.
          const written = new Map<number, string[]>();
          let answer = 0;
          await sendUntilAcknowledged(
            request,
            async (r) => {
              // Each answer drops a partition as `drops` says, then none: the send must end.
              const acked = allOf(r).filter(() => drops[answer++] !== true);
              for (const a of acked)
                written.set(a.partition, [
                  ...(written.get(a.partition) ?? []),
                  ...r[0]!.messages
                    .filter((m) => m.partition === a.partition)
                    .map((m) => String(m.value)),
                ]);
              return acked;
            },
            WORDS,
            { partitionCounts: counts, log: quiet(), maxRounds: 100 },
          );
          for (let p = 0; p < 4; p++)
            expect(written.get(p) ?? []).toEqual(
              partitions.flatMap((q, i) => (q === p ? [`${i}`] : [])),
            );
        },
      ),
    );
  });
});
