import type { TopicMessages } from 'kafkajs';
import { BatchedProducer, queuedAfterFailure } from '../../src/client/batchedProducer';
import { kafkajsPlainProducer, type Producer } from '../../src/kafka/kafkajs';

const q = (key: string, value: string) => ({ message: { key, value } });
const values = (qs: { message: { value: string } }[]) => qs.map((x) => x.message.value);

describe("the client's batched producer after a failed batch", () => {
  it('holds back the queued events of every session the failed batch carried, keeps the others in order', () => {
    const failed = [q('s-1', '1/5'), q('s-2', '2/9')];
    const queue = [
      q('s-3', '3/1'),
      q('s-1', '1/6'),
      q('s-3', '3/2'),
      q('s-2', '2/10'),
      q('s-1', '1/7'),
    ];
    const { send, reject } = queuedAfterFailure(queue, failed);
    expect(values(send)).toEqual(['3/1', '3/2']);
    expect(values(reject)).toEqual(['1/6', '2/10', '1/7']);
  });

  it('sends everything queued when the failed batch shares no session with it', () => {
    const { send, reject } = queuedAfterFailure([q('s-4', '4/1')], [q('s-1', '1/5')]);
    expect(values(send)).toEqual(['4/1']);
    expect(reject).toEqual([]);
  });
});

/** A producer whose produce requests the test acknowledges by hand, one at a time. */
function handAcknowledged() {
  const unanswered: (() => void)[] = [];
  let requests = 0;
  const producer = {
    sendBatch: ({ topicMessages }: { topicMessages: TopicMessages[] }) => {
      requests++;
      return new Promise((resolve) =>
        unanswered.push(() =>
          resolve(
            topicMessages.flatMap(({ topic, messages }) =>
              [...new Set(messages.map((m) => m.partition))].map((partition) => ({
                topicName: topic,
                partition,
              })),
            ),
          ),
        ),
      );
    },
  } as unknown as Producer;
  return {
    producer: kafkajsPlainProducer(producer, { warn: () => undefined }),
    unanswered,
    requests: () => requests,
  };
}

/** Lets every promise already settled run its callbacks (microtasks only: no timer moves). */
const microtasks = async () => {
  for (let i = 0; i < 50; i++) await Promise.resolve();
};

describe("the client's batched producer: flushed()", () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('resolves at once when nothing is queued or being sent', async () => {
    const { producer } = handAcknowledged();
    let flushed = false;
    void new BatchedProducer(producer, 'input', 1).flushed().then(() => (flushed = true));
    await microtasks();
    expect(flushed).toBe(true);
  });

  it('waits with no timer while sends are unacknowledged, and resolves as the last batch is, with no clock moved', async () => {
    const { producer, unanswered, requests } = handAcknowledged();
    const batched = new BatchedProducer(producer, 'input', 1);
    // The first send goes out alone; the second queues behind it, a batch of its own.
    const sent = [
      batched.send({ key: 's-1', value: '1' }),
      batched.send({ key: 's-2', value: '2' }),
    ];
    let flushed = false;
    void batched.flushed().then(() => (flushed = true));
    await microtasks();
    expect(flushed).toBe(false);
    // Nothing polls: no timer is set while it waits, however long that is.
    expect(jest.getTimerCount()).toBe(0);
    unanswered.shift()!();
    await microtasks();
    expect(requests()).toBe(2);
    expect(flushed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    unanswered.shift()!();
    await microtasks();
    expect(flushed).toBe(true);
    await expect(Promise.all(sent)).resolves.toEqual([undefined, undefined]);
  });

  it('every caller waiting is told, and a send after that is waited for anew', async () => {
    const { producer, unanswered } = handAcknowledged();
    const batched = new BatchedProducer(producer, 'input', 1);
    void batched.send({ key: 's-1', value: '1' });
    const waits = [batched.flushed(), batched.flushed()];
    unanswered.shift()!();
    await expect(Promise.all(waits)).resolves.toEqual([undefined, undefined]);
    void batched.send({ key: 's-1', value: '2' });
    let flushed = false;
    void batched.flushed().then(() => (flushed = true));
    await microtasks();
    expect(flushed).toBe(false);
    unanswered.shift()!();
    await microtasks();
    expect(flushed).toBe(true);
  });
});
