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
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findJava } from './java';
import { clusterId, LOG4J2_PROPERTIES, storageFormatArgs } from './localKafka';
import { fetchKafkaLibs } from './maven';
import { freePorts, LOOPBACK } from './ports';
import { makeTempDir, removeTempDir, runCommand, seconds, waitUntil } from './processes';
import { ip, Network, type ClientNamespace } from './cluster/network';
import {
  inNamespace,
  KafkaNode,
  serverProperties,
  type ClusterNode,
  type NodeLaunch,
  type NodeSpec,
} from './cluster/node';
import { clusterReady, healthy } from './cluster/readiness';

export type { ClientNamespace } from './cluster/network';
export { netnsAvailable } from './cluster/network';
export type { ClusterNode } from './cluster/node';
export { coordinatorPartition } from './cluster/readiness';

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

const NETNS_PORT = 9092;
const NETNS_CONTROLLER_PORT = 9093;

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

  const specs: NodeSpec[] = [];
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

  const launch: NodeLaunch = { java, classpath, heapMb, startTimeoutMs: opts.startTimeoutMs };
  const nodes: KafkaNode[] = [];
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
    nodes.push(new KafkaNode(s, config, logFile, launch));
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
      await Promise.all(nodes.map((n) => n.stop(10_000)));
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
      process: nodes.find((n) => !n.running)?.process() ?? nodes[0]!.process(),
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
