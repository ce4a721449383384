import { loadConfig, ConfigError } from '../../src/config/config';
import { chooseReplication, underReplicated } from '../../src/kafka/topics';
import { coordinatorPartition } from '../../src/services/localCluster';

const auto = { replicationFactor: null, minInsyncReplicas: null };

describe('topic replication for the cluster the processor lands on', () => {
  it('by default: RF = min(3, brokers), min.insync.replicas 2 only once RF is 3', () => {
    expect([1, 2, 3, 5].map((b) => chooseReplication(b, auto))).toEqual([
      { replicationFactor: 1, minInsyncReplicas: null },
      { replicationFactor: 2, minInsyncReplicas: null },
      { replicationFactor: 3, minInsyncReplicas: 2 },
      { replicationFactor: 3, minInsyncReplicas: 2 },
    ]);
  });

  it('configured values win over the choice, each on its own', () => {
    expect(chooseReplication(5, { replicationFactor: 5, minInsyncReplicas: null })).toEqual({
      replicationFactor: 5,
      minInsyncReplicas: 2,
    });
    expect(chooseReplication(3, { replicationFactor: 1, minInsyncReplicas: null })).toEqual({
      replicationFactor: 1,
      minInsyncReplicas: null,
    });
    expect(chooseReplication(3, { replicationFactor: null, minInsyncReplicas: 3 })).toEqual({
      replicationFactor: 3,
      minInsyncReplicas: 3,
    });
  });

  it('CG_REPLICATION_FACTOR / CG_MIN_INSYNC_REPLICAS (and flags) are read, a min ISR above RF is refused', () => {
    expect(loadConfig({})).toMatchObject(auto);
    expect(loadConfig({ CG_REPLICATION_FACTOR: '3', CG_MIN_INSYNC_REPLICAS: '2' })).toMatchObject({
      replicationFactor: 3,
      minInsyncReplicas: 2,
    });
    expect(loadConfig({}, { replicationFactor: '2' })).toMatchObject({ replicationFactor: 2 });
    expect(() => loadConfig({ CG_REPLICATION_FACTOR: '0' })).toThrow(/CG_REPLICATION_FACTOR/);
    expect(() => loadConfig({ CG_REPLICATION_FACTOR: '2', CG_MIN_INSYNC_REPLICAS: '3' })).toThrow(
      ConfigError,
    );
  });

  it('an existing topic with fewer replicas or a lower min ISR than wanted is named, others not', () => {
    const want = { replicationFactor: 3, minInsyncReplicas: 2 };
    expect(
      underReplicated(
        [
          { topic: 'ok', replicas: 3, minInsyncReplicas: 2 },
          { topic: 'rf1', replicas: 1, minInsyncReplicas: 1 },
          { topic: 'isr1', replicas: 3, minInsyncReplicas: 1 },
          { topic: 'more', replicas: 5, minInsyncReplicas: 3 },
        ],
        want,
      ),
    ).toEqual([
      'rf1 (replication factor 1 < 3, min.insync.replicas 1 < 2)',
      'isr1 (min.insync.replicas 1 < 2)',
    ]);
    // A single broker wants RF 1 and no min ISR: nothing to warn about.
    expect(
      underReplicated(
        [{ topic: 't', replicas: 1, minInsyncReplicas: 1 }],
        chooseReplication(1, auto),
      ),
    ).toEqual([]);
  });
});

describe('coordinator partition of a key (finding the coordinator a fault test kills)', () => {
  it("is Kafka's abs(String.hashCode) % partitions", () => {
    // Printed by Java 17: s.hashCode() and (s.hashCode() & 0x7fffffff) % 50 for each key.
    expect(coordinatorPartition('', 3)).toBe(0);
    expect(coordinatorPartition('a', 3)).toBe(97 % 3);
    expect(coordinatorPartition('compaction-guard', 50)).toBe(21); // hashCode -828161827
    expect(coordinatorPartition('cg-1234abcd-ctx-1234abcd-0', 50)).toBe(7); // -1977810291
    expect(coordinatorPartition('services-readiness-0', 50)).toBe(20); // -1374618978
  });
});
