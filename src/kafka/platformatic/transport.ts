/**
 * The transport (src/kafka/transport) on @platformatic/kafka 2.12.1: one transactional producer
 * per process (`producerScope: 'process'`; the processor shares it among its partitions,
 * src/kafka/producers.ts), whose offsets commit with the generation and member id of the group's
 * Consumer (KIP-447), so that the group coordinator refuses a zombie's. What the library lacks
 * and what its parts do instead: bench/probes/platformatic/README.md, docs/decisions.md 208.
 * Loaded only when CG_KAFKA_CLIENT=platformatic (src/cli/run.ts): the library is ESM-only and
 * needs Node ≥ 22.22 (connection.ts checks it first).
 */
import type { Consumer } from '@platformatic/kafka';
import type { Transport } from '../transport/transport';
import { platformaticAdmin } from './admin';
import type { PlatformaticClients } from './clients';
import { baseOptions, type Connection } from './connection';

export function platformaticTransport(c: Connection, clients: PlatformaticClients): Transport {
  const base = baseOptions(c);
  // The Consumer of each group, the latest one made (the processor makes it again after a crash).
  const consumers = new Map<string, Consumer>();
  return {
    producerScope: 'process',
    admin: () => platformaticAdmin(base),
    groupConsumer: (o) => {
      const group = clients.groupConsumer(base, o);
      consumers.set(o.groupId, group.client);
      return group;
    },
    partitionReader: (o) => clients.partitionReader(base, o),
    transactionalProducer: (o) =>
      clients.transactionalProducer(base, o, (groupId) => consumers.get(groupId)),
    isTransient: (e) => clients.isTransient(e),
  };
}
