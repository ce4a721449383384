/**
 * The processor's transactional producers by the transport's producerScope (src/kafka/producers.ts),
 * and the platformatic transport's wiring of its parts (src/kafka/platformatic/transport.ts):
 * one producer per input partition on kafkajs, one per process shared through facades on
 * platformatic, whose producer commits with the group's own Consumer.
 */
import pino from 'pino';
import { ConfigError, DEFAULTS, type Config } from '../../src/config/config';
import { transportFor } from '../../src/cli/run';
import { connectionOptions } from '../../src/kafka/client';
import {
  instanceIdOf,
  partitionProducers,
  processTransactionalId,
  type ShareTransactions,
} from '../../src/kafka/producers';
import type { PlatformaticClients } from '../../src/kafka/platformatic/clients';
import { platformaticTransport } from '../../src/kafka/platformatic/transport';
import type {
  GroupConsumerOptions,
  TransactionalProducer,
  TransactionalProducerOptions,
  Transport,
} from '../../src/kafka/transport';

const log = pino({ level: 'silent' });
const config: Config = { ...DEFAULTS, groupId: 'g', inputTopic: 'in', brokers: ['k:9092'] };

function fakeTransport(scope: Transport['producerScope']) {
  const made: TransactionalProducerOptions[] = [];
  const producer = (): TransactionalProducer => ({
    connect: async () => undefined,
    disconnect: async () => undefined,
    transaction: async () => {
      throw new Error('unused');
    },
  });
  const transport: Transport = {
    producerScope: scope,
    admin: () => {
      throw new Error('unused');
    },
    groupConsumer: () => {
      throw new Error('unused');
    },
    partitionReader: () => {
      throw new Error('unused');
    },
    transactionalProducer: (o) => {
      made.push(o);
      return producer();
    },
    isTransient: () => false,
  };
  return { transport, made };
}

describe('the producers of the processor', () => {
  it("'partition': one producer per input partition, transactionalId group-topic-partition, nothing shared", async () => {
    const { transport, made } = fakeTransport('partition');
    const share = jest.fn<ReturnType<ShareTransactions>, Parameters<ShareTransactions>>();
    const producers = partitionProducers(transport, config, log, { share });
    producers.forPartition(0);
    producers.forPartition(3);
    producers.forPartition(3);
    expect(made.map((o) => o.transactionalId)).toEqual(['g-in-0', 'g-in-3', 'g-in-3']);
    expect(share).not.toHaveBeenCalled();
    await producers.close();
  });

  it("'process': one shared producer, transactionalId group-topic-instance, its facades per partition, closed at stop", async () => {
    const { transport, made } = fakeTransport('process');
    const facades: number[] = [];
    let closed = 0;
    let newProducer: (() => TransactionalProducer) | null = null;
    const share: ShareTransactions = (p, options) => {
      newProducer = p;
      expect(options.deadlineMs).toBeGreaterThan(config.transactionTimeoutMs);
      return {
        forPartition: (partition) => {
          facades.push(partition);
          return p();
        },
        close: async () => {
          closed++;
        },
      };
    };
    const producers = partitionProducers(transport, { ...config, instanceId: 'i-1' }, log, {
      share,
    });
    expect(newProducer).not.toBeNull();
    producers.forPartition(2);
    producers.forPartition(5);
    expect(facades).toEqual([2, 5]);
    expect(new Set(made.map((o) => o.transactionalId))).toEqual(new Set(['g-in-i-1']));
    await producers.close();
    expect(closed).toBe(1);
  });

  it('CG_INSTANCE_ID unset: a random instance id per start, never the same twice', () => {
    expect(processTransactionalId(config, 'abc')).toBe('g-in-abc');
    expect(instanceIdOf({ ...config, instanceId: 'stable' })).toBe('stable');
    const a = instanceIdOf(config);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(instanceIdOf(config)).not.toBe(a);
  });
});

describe('the transport on @platformatic/kafka, wired from its parts', () => {
  it('one producer per process; the producer commits with the Consumer of its group, the latest one made', () => {
    const consumers: object[] = [];
    let consumerOf: ((groupId: string) => unknown) | null = null;
    const clients = {
      groupConsumer: (_base: unknown, o: GroupConsumerOptions) => {
        const client = { groupId: o.groupId, n: consumers.length };
        consumers.push(client);
        return { client } as unknown as ReturnType<PlatformaticClients['groupConsumer']>;
      },
      partitionReader: () => ({}) as ReturnType<PlatformaticClients['partitionReader']>,
      transactionalProducer: (
        base: { clientId: string; bootstrapBrokers: unknown },
        _o: unknown,
        of: (groupId: string) => unknown,
      ) => {
        expect(base).toMatchObject({ clientId: config.clientId, bootstrapBrokers: ['k:9092'] });
        consumerOf = of;
        return {} as TransactionalProducer;
      },
      isTransient: (e: unknown) => e === 'transient',
    } as unknown as PlatformaticClients;
    const transport = platformaticTransport(config, clients);
    expect(transport.producerScope).toBe('process');
    const options = { groupId: 'g' } as GroupConsumerOptions;
    transport.groupConsumer(options);
    transport.transactionalProducer({} as TransactionalProducerOptions);
    expect(consumerOf!('g')).toBe(consumers[0]);
    transport.groupConsumer(options); // made again after a crash
    expect(consumerOf!('g')).toBe(consumers[1]);
    expect(consumerOf!('other')).toBeUndefined();
    expect(transport.isTransient('transient')).toBe(true);
  });
});

describe('the transport chosen by CG_KAFKA_CLIENT', () => {
  it('is kafkajs or platformatic; any other kafkaClient of a Config built by hand is refused, never run as one of them', async () => {
    const connection = connectionOptions(['k:9092'], 'cg-test', log, config);
    expect((await transportFor(config, connection)).producerScope).toBe('partition');
    expect(
      (await transportFor({ ...config, kafkaClient: 'platformatic' }, connection)).producerScope,
    ).toBe('process');
    const misspelt = { ...config, kafkaClient: 'platformatik' } as unknown as Config;
    await expect(transportFor(misspelt, connection)).rejects.toThrow(ConfigError);
  });
});
