/**
 * @platformatic/kafka's createTopics applies a call's configs to every topic of it, so the admin
 * on it (src/kafka/platformatic/admin.ts) makes one call per set of configs.
 */
import { byConfigs } from '../../src/kafka/platformatic/admin';

it('groups topics by their configs, each group in the order given', () => {
  const t = (topic: string, configEntries?: { name: string; value: string }[]) => ({
    topic,
    numPartitions: 1,
    replicationFactor: 1,
    ...(configEntries ? { configEntries } : {}),
  });
  const compact = [{ name: 'cleanup.policy', value: 'compact' }];
  const isr = [{ name: 'min.insync.replicas', value: '2' }];
  expect(
    byConfigs([t('a', isr), t('c', compact), t('b', isr), t('d'), t('e', [])]).map((g) =>
      g.map((x) => x.topic),
    ),
  ).toEqual([['a', 'b'], ['c'], ['d', 'e']]);
});
