/**
 * A local Kafka cluster for fault tests and soaks: N KRaft nodes (each a combined controller and
 * broker, the controller quorum of all N) from the same Maven-fetched distribution as the
 * single broker, replication factor 3 and min.insync.replicas 2 by default, the offsets and
 * transaction state topics replicated the same way. Each node can be killed (-9), paused
 * (SIGSTOP), resumed, stopped and started again on the same ports with the same data.
 *
 * Network `loopback` (the default): every node on 127.0.0.1, free ports.
 * Network `netns` (root and iproute2 only): every node in its own network namespace, joined to
 * the host by a veth pair on a bridge, so a node (or a client namespace, for a processor) can be
 * cut off the network, both ways, by taking its link down: a network partition without
 * iptables. The host reaches the nodes through the bridge address.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from '../kafka/kafkajs';
import { findJava } from './java';
import { clusterId, kafkaServerArgs, LOG4J2_PROPERTIES, storageFormatArgs } from './localKafka';
import { fetchKafkaLibs } from './maven';
import { sleep } from '../time';
import { freePorts, LOOPBACK } from './ports';
import { undoIfWeDie } from './reaper';
import {
  makeTempDir,
  onExitCleanup,
  removeTempDir,
  runCommand,
  seconds,
  startProcess,
  waitUntil,
  type ManagedProcess,
} from './processes';

export type ClusterNetwork = 'loopback' | 'netns';

export interface LocalClusterOptions {
  cacheDir: string;
  version: string;
  startTimeoutMs: number;
  /** Nodes (default 3). Replication factor min(3, nodes), min ISR 2 when that is 3. */
  nodes?: number;
  network?: ClusterNetwork;
  /** Max heap of each node's JVM in MiB (default 384: three nodes share a small machine). */
  heapMb?: number;
  /** Partitions of __consumer_offsets and __transaction_state (default 3: coordinators spread). */
  coordinatorPartitions?: number;
  /** Extra server.properties lines for every node. */
  extraProperties?: string[];
}

export interface ClusterNode {
  /** node.id, as in metadata (leaders, replicas, coordinators). */
  readonly id: number;
  /** host:port of its PLAINTEXT listener. */
  readonly broker: string;
  readonly logFile: string;
  /** The JVM's pid while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** kill -9; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: the process stays, answers nothing (a zombie broker). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Clean shutdown (SIGTERM: controlled shutdown moves its leaders first). */
  stop(): Promise<void>;
  /** Starts it again (same ports, same data) and waits until the cluster lists it. */
  start(): Promise<void>;
  /** stop(), `downMs` of nothing, start(). */
  restart(downMs?: number): Promise<void>;
  /** netns only: cut the node off the network (its link down, both ways). */
  isolate(): void;
  /** netns only: its link up again. */
  heal(): void;
}

/** netns only: a namespace for a client (a processor) that can be cut off the cluster. */
export interface ClientNamespace {
  readonly name: string;
  /** Its address, as the host and the nodes see it. */
  readonly address: string;
  /** Prepend to a command to run it inside: `ip netns exec <name>`. */
  readonly prefix: string[];
  isolate(): void;
  heal(): void;
}

export interface LocalKafkaCluster {
  /** host:port of every node, for bootstrap. */
  brokers: string[];
  nodes: ClusterNode[];
  network: ClusterNetwork;
  /** The host's address as the nodes and client namespaces see it (127.0.0.1 on loopback). */
  hostAddress: string;
  replicationFactor: number;
  minInsyncReplicas: number;
  /** The node with this node.id. */
  node(id: number): ClusterNode;
  /** netns only: a fresh client namespace on the cluster's bridge. */
  clientNamespace(): ClientNamespace;
  /** Until every node is listed and every partition of `topics` has its full ISR. */
  waitHealthy(topics?: string[], timeoutMs?: number): Promise<void>;
  /** Stops every node, deletes the data and (netns) the namespaces; idempotent. */
  stop(): Promise<void>;
}

/** Kafka's partition of a coordinator key: Utils.abs(key.hashCode()) % partitions (Java String hash). */
export function coordinatorPartition(key: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (Math.imul(31, h) + key.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitions;
}

const NETNS_PORT = 9092;
const NETNS_CONTROLLER_PORT = 9093;
let namespaceSeq = 0;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Whether `netns` can work here: root, and `ip netns` answers. */
export function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A bridge with the host on .1 and a namespace per member, each behind a veth pair. */
class Network {
  readonly tag = `${process.pid % 100_000}${String.fromCharCode(97 + (namespaceSeq++ % 26))}`;
  readonly subnet = `10.213.${(process.pid + namespaceSeq * 37) % 250}`;
  readonly bridge = `cgb${this.tag}`;
  readonly hostAddress = `${this.subnet}.1`;
  private readonly namespaces: string[] = [];
  private readonly unregister: () => void;
  /** What the reaper would undo if we were killed before `remove` (reaper.ts). */
  private readonly leftovers: (() => void)[] = [];
  constructor() {
    this.unregister = onExitCleanup(() => this.remove());
    ip('link', 'add', this.bridge, 'type', 'bridge');
    this.leftovers.push(undoIfWeDie({ kind: 'command', argv: ['ip', 'link', 'del', this.bridge] }));
    ip('addr', 'add', `${this.hostAddress}/24`, 'dev', this.bridge);
    ip('link', 'set', this.bridge, 'up');
  }
  /** Namespace `cg<tag><suffix>`, its link `cg<tag><suffix>` on the bridge. */
  add(suffix: string, host: number): { name: string; address: string; link: string } {
    const name = `cg${this.tag}${suffix}`;
    const address = `${this.subnet}.${host}`;
    ip('netns', 'add', name);
    this.namespaces.push(name);
    this.leftovers.push(undoIfWeDie({ kind: 'command', argv: ['ip', 'netns', 'del', name] }));
    ip('link', 'add', name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
    ip('link', 'set', name, 'master', this.bridge);
    ip('link', 'set', name, 'up');
    ip('-n', name, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', name, 'link', 'set', 'eth0', 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    return { name, address, link: name };
  }
  remove(): void {
    this.unregister();
    for (const forget of this.leftovers.splice(0)) forget();
    for (const ns of this.namespaces.splice(0)) {
      try {
        ip('link', 'del', ns);
      } catch {
        // gone with its namespace already
      }
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
    try {
      ip('link', 'del', this.bridge);
    } catch {
      // already gone
    }
  }
}

export async function startLocalKafkaCluster(
  opts: LocalClusterOptions,
): Promise<LocalKafkaCluster> {
  const count = opts.nodes ?? 3;
  const network = opts.network ?? 'loopback';
  const heapMb = opts.heapMb ?? 384;
  const replicationFactor = Math.min(3, count);
  const minIsr = replicationFactor >= 3 ? 2 : 1;
  const coordinatorPartitions = opts.coordinatorPartitions ?? 3;
  const libs = await fetchKafkaLibs(opts.cacheDir, opts.version);
  const { java } = findJava(17);
  const workDir = makeTempDir('cg-kafka-cluster-');
  const net = network === 'netns' ? new Network() : undefined;

  interface Spec {
    id: number;
    host: string;
    port: number;
    controllerPort: number;
    namespace?: { name: string; link: string };
  }
  const specs: Spec[] = [];
  const loopbackPorts = net === undefined ? await freePorts(2 * count) : [];
  for (let i = 0; i < count; i++) {
    const id = i + 1;
    if (net !== undefined) {
      const ns = net.add(`k${id}`, 10 + id);
      specs.push({
        id,
        host: ns.address,
        port: NETNS_PORT,
        controllerPort: NETNS_CONTROLLER_PORT,
        namespace: ns,
      });
    } else {
      specs.push({
        id,
        host: LOOPBACK,
        port: loopbackPorts[2 * i]!,
        controllerPort: loopbackPorts[2 * i + 1]!,
      });
    }
  }
  const brokers = specs.map((s) => `${s.host}:${s.port}`);
  const voters = specs.map((s) => `${s.id}@${s.host}:${s.controllerPort}`).join(',');
  const log4j = join(workDir, 'log4j2.properties');
  writeFileSync(log4j, LOG4J2_PROPERTIES);
  const classpath = ['-cp', `${libs}/*`, `-Dlog4j2.configurationFile=${log4j}`];
  const id = clusterId();
  const started = Date.now();
  const logName = `kafka-cluster-${specs[0]!.port}-${process.pid}-${Date.now() % 100_000}`;
  process.stderr.write(
    `[services] starting a ${count}-node Kafka ${opts.version} cluster (${network}) on ${brokers.join(',')}, logs ${join(opts.cacheDir, 'logs', `${logName}-*.log`)}\n`,
  );

  const inNamespace = (s: Spec, command: string, args: string[]) =>
    s.namespace === undefined
      ? { command, args }
      : { command: 'ip', args: ['netns', 'exec', s.namespace.name, command, ...args] };

  const nodes: (ClusterNode & { launch(): void; proc(): ManagedProcess | undefined })[] = [];
  for (const s of specs) {
    const config = join(workDir, `server-${s.id}.properties`);
    writeFileSync(
      config,
      serverProperties(s, voters, join(workDir, `data-${s.id}`), {
        replicationFactor,
        minIsr,
        coordinatorPartitions,
        extra: opts.extraProperties ?? [],
      }),
    );
    const logFile = join(opts.cacheDir, 'logs', `${logName}-${s.id}.log`);
    await runCommand({
      ...inNamespace(s, java, storageFormatArgs(classpath, id, config)),
      output: { logFile },
      timeoutMs: opts.startTimeoutMs,
    });
    let proc: ManagedProcess | undefined;
    const broker = `${s.host}:${s.port}`;
    // Through this node alone: its listener opens once it has caught up with the metadata log,
    // and the cluster must list it again (a killed node stays listed until its session expires).
    const listed = () =>
      waitUntil(async () => (await listedBrokers([broker])).includes(s.id), {
        timeoutMs: opts.startTimeoutMs,
        intervalMs: 500,
        what: `node ${s.id} (${broker}) to rejoin the cluster`,
        process: proc,
      });
    const node = {
      id: s.id,
      broker,
      logFile,
      get pid() {
        return proc?.exitedWith === undefined ? proc?.pid : undefined;
      },
      get running() {
        return proc !== undefined && proc.exitedWith === undefined;
      },
      proc: () => proc,
      launch() {
        proc = startProcess({
          name: `kafka-${s.id}`,
          ...inNamespace(
            s,
            java,
            kafkaServerArgs({ initialMb: 64, maxMb: heapMb }, classpath, config),
          ),
          logFile,
        });
      },
      async kill() {
        const p = proc;
        if (p === undefined || p.exitedWith !== undefined) return;
        p.signal('SIGKILL');
        await p.exited;
      },
      pause() {
        proc?.signal('SIGSTOP');
      },
      resume() {
        proc?.signal('SIGCONT');
      },
      async stop() {
        await proc?.stop(60_000);
      },
      async start() {
        if (node.running) throw new Error(`node ${s.id} is running`);
        node.launch();
        await listed();
      },
      async restart(downMs = 0) {
        await node.stop();
        if (downMs > 0) await sleep(downMs);
        await node.start();
      },
      isolate() {
        if (s.namespace === undefined) throw new Error('isolate() needs network netns');
        ip('link', 'set', s.namespace.link, 'down');
      },
      heal() {
        if (s.namespace === undefined) throw new Error('heal() needs network netns');
        ip('link', 'set', s.namespace.link, 'up');
      },
    };
    nodes.push(node);
  }
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // A paused node would hold the others' controlled shutdown; a partitioned one too.
      for (const s of specs)
        if (s.namespace !== undefined) ip('link', 'set', s.namespace.link, 'up');
      for (const n of nodes) n.resume();
      // The last node standing cannot finish a controlled shutdown (no quorum left to ack it):
      // it gets SIGKILL after the grace period, its data is deleted anyway.
      await Promise.all(nodes.map((n) => n.proc()?.stop(10_000)));
      net?.remove();
      removeTempDir(workDir);
    })());
  try {
    for (const n of nodes) n.launch();
    // Each node's process is watched: one dying at start-up ends the wait with its log.
    await waitUntil(() => clusterReady(brokers, count, coordinatorPartitions), {
      timeoutMs: opts.startTimeoutMs,
      intervalMs: 1_000,
      what: `the ${count} Kafka nodes to form a cluster and load their coordinators`,
      process: nodes.find((n) => !n.running)?.proc() ?? nodes[0]!.proc(),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  process.stderr.write(`[services] Kafka cluster ready in ${seconds(started)} s\n`);

  const node = (nodeId: number): ClusterNode => {
    const n = nodes.find((x) => x.id === nodeId);
    if (n === undefined) throw new Error(`no node ${nodeId}`);
    return n;
  };
  let clients = 0;
  return {
    brokers,
    nodes,
    network,
    hostAddress: net?.hostAddress ?? LOOPBACK,
    replicationFactor,
    minInsyncReplicas: minIsr,
    node,
    clientNamespace() {
      if (net === undefined) throw new Error('clientNamespace() needs network netns');
      const ns = net.add(`p${++clients}`, 100 + clients);
      return {
        name: ns.name,
        address: ns.address,
        prefix: ['ip', 'netns', 'exec', ns.name],
        isolate: () => ip('link', 'set', ns.link, 'down'),
        heal: () => ip('link', 'set', ns.link, 'up'),
      };
    },
    waitHealthy: (topics = [], timeoutMs = opts.startTimeoutMs) =>
      waitUntil(() => healthy(brokers, count, topics), {
        timeoutMs,
        intervalMs: 500,
        what: `every node listed and every partition of ${topics.join(', ') || '(no topics)'} fully in sync`,
      }),
    stop,
  };
}

function client(brokers: string[]): Kafka {
  return new Kafka({
    clientId: 'services-cluster-readiness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
}

async function listedBrokers(brokers: string[]): Promise<number[]> {
  const admin = client(brokers).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.map((b) => b.nodeId);
  } finally {
    await admin.disconnect();
  }
}

async function healthy(brokers: string[], count: number, topics: string[]): Promise<boolean> {
  const admin = client(brokers).admin();
  try {
    await admin.connect();
    if ((await admin.describeCluster()).brokers.length < count) return false;
    if (topics.length === 0) return true;
    const meta = await admin.fetchTopicMetadata({ topics });
    return meta.topics.every((t) =>
      t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length),
    );
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every node registered, and the group and transaction coordinators of every partition of the
 * internal topics loaded (a key per partition): kafkajs does not retry LOAD_IN_PROGRESS for
 * TxnOffsetCommit, so tests must not meet the warm-up (see localKafka.ts `isReady`).
 */
async function clusterReady(
  brokers: string[],
  count: number,
  partitions: number,
): Promise<boolean> {
  const kafka = client(brokers);
  const admin = kafka.admin();
  const keys: string[] = [];
  for (let i = 0; keys.length < partitions; i++) {
    const key = `services-readiness-${i}`;
    if (coordinatorPartition(key, partitions) === keys.length) keys.push(key);
  }
  const producers = keys.map((transactionalId) =>
    kafka.producer({
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 1, initialRetryTime: 100 },
    }),
  );
  try {
    await admin.connect();
    if ((await admin.describeCluster()).brokers.length < count) return false;
    await admin.describeGroups(keys);
    for (const p of producers) await p.connect();
    return true;
  } finally {
    for (const p of producers) await p.disconnect();
    await admin.disconnect();
  }
}

interface ReplicationSettings {
  replicationFactor: number;
  minIsr: number;
  coordinatorPartitions: number;
  extra: string[];
}

/**
 * One combined controller+broker node of the quorum. Timeouts shorter than Kafka's defaults so
 * that a fault test sees a fenced broker and a shrunk ISR within seconds, not half a minute:
 * broker session 6 s (default 9 s), replica lag 10 s (default 30 s).
 */
function serverProperties(
  s: { id: number; host: string; port: number; controllerPort: number },
  voters: string,
  dataDir: string,
  r: ReplicationSettings,
): string {
  return [
    'process.roles=broker,controller',
    `node.id=${s.id}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://${s.host}:${s.port},CONTROLLER://${s.host}:${s.controllerPort}`,
    `advertised.listeners=PLAINTEXT://${s.host}:${s.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    `default.replication.factor=${r.replicationFactor}`,
    `min.insync.replicas=${r.minIsr}`,
    `offsets.topic.replication.factor=${r.replicationFactor}`,
    `offsets.topic.num.partitions=${r.coordinatorPartitions}`,
    `transaction.state.log.replication.factor=${r.replicationFactor}`,
    `transaction.state.log.min.isr=${r.minIsr}`,
    `transaction.state.log.num.partitions=${r.coordinatorPartitions}`,
    `share.coordinator.state.topic.replication.factor=${r.replicationFactor}`,
    `share.coordinator.state.topic.min.isr=${r.minIsr}`,
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'unclean.leader.election.enable=false',
    'broker.session.timeout.ms=6000',
    'broker.heartbeat.interval.ms=1000',
    'replica.lag.time.max.ms=10000',
    ...r.extra,
    '',
  ].join('\n');
}
