/**
 * One node of a local cluster: a combined KRaft controller and broker in its own JVM, which a
 * fault test can kill (-9), pause (SIGSTOP), resume, stop, start again on the same ports with
 * the same data, and (netns) cut off the network.
 */
import { sleep } from '../../time';
import { kafkaServerArgs } from '../localKafka';
import { startProcess, waitUntil, type ManagedProcess } from '../processes';
import { ip } from './network';
import { listedBrokers } from './readiness';

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

/** Where a node listens, and (netns) its namespace. */
export interface NodeSpec {
  id: number;
  host: string;
  port: number;
  controllerPort: number;
  namespace?: { name: string; link: string };
}

/** How a node's JVM is run: the java binary, the classpath options and its heap. */
export interface NodeLaunch {
  java: string;
  classpath: string[];
  heapMb: number;
  startTimeoutMs: number;
}

/** `command args`, run inside the spec's namespace when it has one. */
export function inNamespace(
  s: NodeSpec,
  command: string,
  args: string[],
): { command: string; args: string[] } {
  return s.namespace === undefined
    ? { command, args }
    : { command: 'ip', args: ['netns', 'exec', s.namespace.name, command, ...args] };
}

export class KafkaNode implements ClusterNode {
  readonly id: number;
  readonly broker: string;
  private proc: ManagedProcess | undefined;

  constructor(
    private readonly spec: NodeSpec,
    private readonly configFile: string,
    readonly logFile: string,
    private readonly launchWith: NodeLaunch,
  ) {
    this.id = spec.id;
    this.broker = `${spec.host}:${spec.port}`;
  }

  get pid(): number | undefined {
    return this.proc?.exitedWith === undefined ? this.proc?.pid : undefined;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitedWith === undefined;
  }

  /** Its process (to watch it during the cluster's start-up). */
  process(): ManagedProcess | undefined {
    return this.proc;
  }

  /** Starts its JVM without waiting for it. */
  launch(): void {
    const { java, classpath, heapMb } = this.launchWith;
    this.proc = startProcess({
      name: `kafka-${this.id}`,
      ...inNamespace(
        this.spec,
        java,
        kafkaServerArgs({ initialMb: 64, maxMb: heapMb }, classpath, this.configFile),
      ),
      logFile: this.logFile,
    });
  }

  async kill(): Promise<void> {
    const p = this.proc;
    if (p === undefined || p.exitedWith !== undefined) return;
    p.signal('SIGKILL');
    await p.exited;
  }

  pause(): void {
    this.proc?.signal('SIGSTOP');
  }

  resume(): void {
    this.proc?.signal('SIGCONT');
  }

  async stop(graceMs = 60_000): Promise<void> {
    await this.proc?.stop(graceMs);
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`node ${this.id} is running`);
    this.launch();
    await this.listed();
  }

  async restart(downMs = 0): Promise<void> {
    await this.stop();
    if (downMs > 0) await sleep(downMs);
    await this.start();
  }

  isolate(): void {
    ip('link', 'set', this.link('isolate'), 'down');
  }

  heal(): void {
    ip('link', 'set', this.link('heal'), 'up');
  }

  private link(what: string): string {
    if (this.spec.namespace === undefined) throw new Error(`${what}() needs network netns`);
    return this.spec.namespace.link;
  }

  /**
   * Through this node alone: its listener opens once it has caught up with the metadata log,
   * and the cluster must list it again (a killed node stays listed until its session expires).
   */
  private listed(): Promise<void> {
    return waitUntil(async () => (await listedBrokers([this.broker])).includes(this.id), {
      timeoutMs: this.launchWith.startTimeoutMs,
      intervalMs: 500,
      what: `node ${this.id} (${this.broker}) to rejoin the cluster`,
      process: this.proc,
    });
  }
}

export interface ReplicationSettings {
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
export function serverProperties(
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
