import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkajsProbeCluster } from '../kafka/kafkajs';
import { findJava } from './java';
import { fetchKafkaLibs } from './maven';
import { freePorts, LOOPBACK } from './ports';
import {
  makeTempDir,
  removeTempDir,
  runCommand,
  seconds,
  startProcess,
  waitUntil,
} from './processes';
import { sleep } from '../time';

export interface LocalKafkaOptions {
  cacheDir: string;
  version: string;
  /** How long the broker may take to answer metadata requests (the first start is slowest). */
  startTimeoutMs: number;
  /** Off by default so tests and code must create the topics (and configs) they rely on. */
  autoCreateTopics?: boolean;
  /**
   * Extra listeners next to the PLAINTEXT one (which stays, and serves inter-broker traffic and
   * the readiness check), e.g. a SASL_SSL listener for security tests. Each gets a free port.
   */
  extraListeners?: ExtraListener[];
  /** Extra server.properties lines (e.g. `listener.name.secure.ssl.keystore.location=...`). */
  extraProperties?: string[];
  /** Extra `StorageTool format` arguments, e.g. `['--add-scram', 'SCRAM-SHA-512=[name=a,password=b]']`. */
  formatArgs?: string[];
}

export interface ExtraListener {
  /** Listener name, upper case (e.g. `SECURE`); its properties are `listener.name.<lower case>.*`. */
  name: string;
  protocol: 'SSL' | 'SASL_SSL' | 'SASL_PLAINTEXT';
}

export interface LocalKafka {
  brokers: string[];
  /** host:port of each extra listener, by name. */
  listeners: Record<string, string>;
  logFile: string;
  stop(): Promise<void>;
  /** Stops the broker process and starts it again on the same ports with the same data. */
  restart(downMs?: number): Promise<void>;
}

/** A Kafka broker with its data dir in a temp dir, deleted again on stop(). */
export async function startLocalKafka(opts: LocalKafkaOptions): Promise<LocalKafka> {
  const libs = await fetchKafkaLibs(opts.cacheDir, opts.version);
  const { java } = findJava(17); // Kafka 4.x brokers require Java 17+
  const extra = opts.extraListeners ?? [];
  const [port, controllerPort, ...extraPorts] = (await freePorts(2 + extra.length)) as [
    number,
    number,
    ...number[],
  ];
  const listeners = Object.fromEntries(
    extra.map((l, i) => [l.name, `${LOOPBACK}:${extraPorts[i]}`]),
  );
  const workDir = makeTempDir('cg-kafka-');
  const logFile = join(opts.cacheDir, 'logs', `kafka-${port}.log`);
  const config = join(workDir, 'server.properties');
  writeFileSync(
    config,
    serverProperties(port, controllerPort, join(workDir, 'data'), opts, listeners),
  );
  const log4j = join(workDir, 'log4j2.properties');
  writeFileSync(log4j, LOG4J2_PROPERTIES);
  const classpath = ['-cp', `${libs}/*`, `-Dlog4j2.configurationFile=${log4j}`];

  const started = Date.now();
  process.stderr.write(
    `[services] starting Kafka ${opts.version} on ${LOOPBACK}:${port}, log ${logFile}\n`,
  );
  // KRaft needs its metadata log formatted with a cluster id before the first start.
  await runCommand({
    command: java,
    args: [...storageFormatArgs(classpath, clusterId(), config), ...(opts.formatArgs ?? [])],
    output: { logFile },
    timeoutMs: opts.startTimeoutMs,
  });
  const launch = () =>
    startProcess({
      name: 'kafka',
      command: java,
      args: kafkaServerArgs({ initialMb: 128, maxMb: 512 }, classpath, config),
      logFile,
    });
  let broker = launch();
  const brokers = [`${LOOPBACK}:${port}`];
  const stop = async (): Promise<void> => {
    await broker.stop();
    removeTempDir(workDir);
  };
  const ready = () =>
    waitUntil(() => isReady(brokers), {
      timeoutMs: opts.startTimeoutMs,
      intervalMs: 500,
      what: `Kafka at ${brokers[0]} to serve metadata, groups and transactions`,
      process: broker,
    });
  try {
    await ready();
  } catch (err) {
    await stop();
    throw err;
  }
  // Same ports, same data: for broker-restart fault tests.
  const restart = async (downMs = 0): Promise<void> => {
    await broker.stop();
    if (downMs > 0) await sleep(downMs);
    broker = launch();
    await ready();
  };
  process.stderr.write(`[services] Kafka ready in ${seconds(started)} s\n`);
  return { brokers, listeners, logFile, stop, restart };
}

/**
 * Ready = the broker has registered with its controller, lists topics, and both coordinators
 * answer. The last part matters: on a fresh broker the first FindCoordinator creates
 * __consumer_offsets / __transaction_state, and until their partitions are loaded the broker
 * answers COORDINATOR_NOT_AVAILABLE / LOAD_IN_PROGRESS, which kafkajs 2.2.4 does not retry
 * for TxnOffsetCommit (a transaction's sendOffsets fails). Tests should not see that warm-up.
 */
export function isReady(brokers: string[], expectedBrokers = 1): Promise<boolean> {
  // waitUntil retries the whole check.
  const probe = { clientId: 'services-readiness', brokers, connectionTimeoutMs: 1_000 };
  return kafkajsProbeCluster(probe, async (cluster) => {
    if ((await cluster.brokerIds()).length < expectedBrokers) return false;
    await cluster.listTopics();
    await cluster.describeGroups(['services-readiness']); // throws until the group coordinator is loaded
    await cluster.initTransactions(['services-readiness']); // through the transaction coordinator
    return true;
  });
}

/**
 * A single combined broker+controller node. Replication factors and ISR minimums are 1
 * because there is one node; internal topics get one partition so the first consumer group
 * and the first transactional producer do not wait for 50 partitions to be created.
 */
function serverProperties(
  port: number,
  controllerPort: number,
  dataDir: string,
  opts: LocalKafkaOptions,
  extraAddresses: Record<string, string> = {},
): string {
  const extra = opts.extraListeners ?? [];
  const extraListeners = extra.map((l) => `,${l.name}://${extraAddresses[l.name]}`).join('');
  const extraProtocols = extra.map((l) => `,${l.name}:${l.protocol}`).join('');
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${LOOPBACK}:${controllerPort}`,
    `listeners=PLAINTEXT://${LOOPBACK}:${port},CONTROLLER://${LOOPBACK}:${controllerPort}${extraListeners}`,
    `advertised.listeners=PLAINTEXT://${LOOPBACK}:${port}${extraListeners}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${extraProtocols}`,
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'min.insync.replicas=1',
    'group.initial.rebalance.delay.ms=0',
    `auto.create.topics.enable=${opts.autoCreateTopics === true}`,
    ...(opts.extraProperties ?? []),
    '',
  ].join('\n');
}

/** Everything to stdout (which is the log file); the per-config dumps are most of the volume. */
export const LOG4J2_PROPERTIES = `status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
`;

/** Kafka's Uuid string form: 16 random bytes, URL-safe base64 without padding, not starting with '-'. */
/**
 * The JVM arguments of KRaft's `StorageTool format` (a node's metadata log needs it before its
 * first start). A short run, so the JIT's C1 tier and the serial GC are enough and start faster.
 */
export function storageFormatArgs(classpath: string[], id: string, config: string): string[] {
  return [
    '-Xmx256m',
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    ...classpath,
    'kafka.tools.StorageTool',
    'format',
    '--cluster-id',
    id,
    '--config',
    config,
  ];
}

/** The JVM arguments of one Kafka node (broker, or controller and broker) with `config`. */
export function kafkaServerArgs(
  heap: { initialMb: number; maxMb: number },
  classpath: string[],
  config: string,
): string[] {
  return [
    `-Xms${heap.initialMb}m`,
    `-Xmx${heap.maxMb}m`,
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    ...classpath,
    'kafka.Kafka',
    config,
  ];
}

export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
