import { queuedAfterFailure } from '../../src/client/batchedProducer';

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
