/**
 * What the local services (src/services) ask a cluster they started before they call it
 * ready: one short-lived connection, no retries (the caller polls the whole check), no logs.
 */

export interface ReadinessProbeOptions {
  clientId: string;
  brokers: string[];
  connectionTimeoutMs: number;
  /** Omitted: the client's default. */
  requestTimeoutMs?: number;
}

/** The questions, on one admin connection (connected before the first). */
export interface ReadinessProbe {
  /** The node ids the cluster lists. */
  brokerIds(): Promise<number[]>;
  listTopics(): Promise<string[]>;
  /** Whether every partition of `topics` has a leader and all its replicas in sync. */
  inSync(topics: string[]): Promise<boolean>;
  /** Asks the group coordinator of each group: rejects until it is loaded. */
  describeGroups(groupIds: string[]): Promise<void>;
  /**
   * Initialises a transactional producer of each id, one after another (InitProducerId goes
   * through its transaction coordinator): rejects until that coordinator is loaded.
   */
  initTransactions(transactionalIds: string[]): Promise<void>;
}

/** Runs `ask` on a probe of the cluster and closes everything it opened, whatever `ask` did. */
export type ProbeCluster = <T>(
  o: ReadinessProbeOptions,
  ask: (probe: ReadinessProbe) => Promise<T>,
) => Promise<T>;
