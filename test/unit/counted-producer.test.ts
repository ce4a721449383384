import { countedProducer } from '../../src/kafka/countedProducer';
import type { ProducerTransaction, TransactionalProducer } from '../../src/kafka/transport';

/** A producer whose transactions' commit fails when `failCommit` says so. */
function producer(failCommit: () => boolean): TransactionalProducer {
  const txn: ProducerTransaction = {
    send: async () => undefined,
    sendOffsets: async () => undefined,
    commit: async () => {
      if (failCommit()) throw new Error('commit refused');
    },
    abort: async () => undefined,
  };
  return {
    connect: async () => undefined,
    disconnect: async () => undefined,
    transaction: async () => txn,
  };
}

describe('countedProducer', () => {
  it('counts each transaction once as it ends: committed, aborted, and not a commit that failed', async () => {
    const ends: string[] = [];
    let fail = false;
    const p = countedProducer(
      producer(() => fail),
      (outcome) => ends.push(outcome),
    );
    await (await p.transaction()).commit();
    await (await p.transaction()).abort();
    fail = true;
    const t = await p.transaction();
    await expect(t.commit()).rejects.toThrow('commit refused');
    await t.abort();
    expect(ends).toEqual(['committed', 'aborted', 'aborted']);
  });
});
