/**
 * The coordinator cache's rules, on a fake kafkajs Cluster (the integration suite runs it
 * against the real broker: test/integration/coordinator-cache.test.ts).
 */
import {
  optInClient,
  wrapFindGroupCoordinator,
  type CoordinatorBroker,
  type FindCoordinatorArgs,
} from '../../src/kafka/kafkajs/coordinatorCache';

const GROUP = 0;
const TRANSACTION = 1;

class FakeBroker implements CoordinatorBroker {
  calls: string[] = [];
  failNext: { type?: string; name?: string } | null = null;
  constructor(readonly nodeId: number) {}
  async endTxn(): Promise<string> {
    this.calls.push('endTxn');
    if (this.failNext) {
      const e = Object.assign(new Error('request failed'), this.failNext);
      this.failNext = null;
      throw e;
    }
    return 'ok';
  }
}

/** Answers FindCoordinator with `coordinator` and counts the lookups. */
class FakeCluster {
  lookups: FindCoordinatorArgs[] = [];
  coordinator = 1;
  readonly brokers = new Map([1, 2].map((id) => [id, new FakeBroker(id)]));
  constructor(readonly rootLogger: object) {}
  async findBroker({ nodeId }: { nodeId: number }): Promise<CoordinatorBroker> {
    const b = this.brokers.get(nodeId);
    if (!b)
      throw Object.assign(new Error(`Broker ${nodeId} not found`), {
        name: 'KafkaJSBrokerNotFound',
      });
    return b;
  }
  async findGroupCoordinator(args: FindCoordinatorArgs): Promise<CoordinatorBroker> {
    this.lookups.push(args);
    return this.findBroker({ nodeId: this.coordinator });
  }
}
wrapFindGroupCoordinator(FakeCluster.prototype);

function transactionalCluster(): FakeCluster {
  const logger = {};
  optInClient(logger);
  return new FakeCluster(logger);
}

const txn = { groupId: 'cg-input-0', coordinatorType: TRANSACTION };
const group = { groupId: 'cg', coordinatorType: GROUP };

describe('coordinator cache', () => {
  test('a transactional cluster asks for each coordinator once across many transactions', async () => {
    const c = transactionalCluster();
    for (let i = 0; i < 5; i++) {
      // One transaction's lookups, as kafkajs' eosManager makes them.
      await c.findGroupCoordinator(txn);
      await c.findGroupCoordinator(txn);
      await c.findGroupCoordinator(group);
      await c.findGroupCoordinator(txn);
    }
    expect(c.lookups).toEqual([txn, group]);
  });

  test('the cached answer is the same broker kafkajs would use (its methods, its nodeId)', async () => {
    const c = transactionalCluster();
    await c.findGroupCoordinator(txn);
    const b = (await c.findGroupCoordinator(txn)) as FakeBroker;
    expect(b.nodeId).toBe(1);
    await expect(b.endTxn()).resolves.toBe('ok');
    expect(c.brokers.get(1)!.calls).toEqual(['endTxn']);
  });

  test('a failed request to the coordinator makes the next call look it up again', async () => {
    const c = transactionalCluster();
    const first = (await c.findGroupCoordinator(txn)) as FakeBroker;
    c.coordinator = 2; // the coordinator moved
    c.brokers.get(1)!.failNext = { type: 'NOT_COORDINATOR' };
    await expect(first.endTxn()).rejects.toMatchObject({ type: 'NOT_COORDINATOR' });
    const again = await c.findGroupCoordinator(txn);
    expect(again.nodeId).toBe(2);
    expect(c.lookups).toHaveLength(2);
  });

  test('a dropped connection also forgets the coordinator', async () => {
    const c = transactionalCluster();
    const b = (await c.findGroupCoordinator(txn)) as FakeBroker;
    b.failNext = { name: 'KafkaJSConnectionError' };
    await expect(b.endTxn()).rejects.toThrow('request failed');
    await c.findGroupCoordinator(txn);
    expect(c.lookups).toHaveLength(2);
  });

  test('CONCURRENT_TRANSACTIONS keeps the coordinator (it answered, so it still is one)', async () => {
    const c = transactionalCluster();
    const b = (await c.findGroupCoordinator(txn)) as FakeBroker;
    b.failNext = { type: 'CONCURRENT_TRANSACTIONS' };
    await expect(b.endTxn()).rejects.toMatchObject({ type: 'CONCURRENT_TRANSACTIONS' });
    await c.findGroupCoordinator(txn);
    expect(c.lookups).toHaveLength(1);
  });

  test('a cached node that left the metadata is looked up again instead of failing', async () => {
    const c = transactionalCluster();
    await c.findGroupCoordinator(txn);
    c.brokers.delete(1);
    c.brokers.set(3, new FakeBroker(3));
    c.coordinator = 3;
    const b = await c.findGroupCoordinator(txn);
    expect(b.nodeId).toBe(3);
    expect(c.lookups).toHaveLength(2);
  });

  test('consumers and admins (no transaction lookup) keep kafkajs behaviour: every call asks', async () => {
    const c = transactionalCluster();
    await c.findGroupCoordinator(group);
    await c.findGroupCoordinator(group);
    expect(c.lookups).toEqual([group, group]);
  });

  test('a client that was not opted in is untouched', async () => {
    const c = new FakeCluster({});
    await c.findGroupCoordinator(txn);
    await c.findGroupCoordinator(txn);
    expect(c.lookups).toHaveLength(2);
  });

  test('wrapping twice wraps once', async () => {
    const before = FakeCluster.prototype.findGroupCoordinator;
    wrapFindGroupCoordinator(FakeCluster.prototype);
    expect(FakeCluster.prototype.findGroupCoordinator).toBe(before);
  });
});
