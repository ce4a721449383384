/**
 * Upstream: no kafkajs issue asks for it; the nearest is tulios/kafkajs#304 (a transaction's
 * latency, KAFKA-5477; open). Applies to kafkajs 2.2.4: it patches kafkajs internals
 * (`require('kafkajs/src/cluster')`, `Cluster.prototype.findGroupCoordinator`, `rootLogger`,
 * `findBroker`), which no kafkajs version promises to keep.
 *
 * Remembers the transaction and group coordinators of transactional producers.
 *
 * kafkajs 2.2 sends FindCoordinator before every AddPartitionsToTxn, AddOffsetsToTxn,
 * TxnOffsetCommit and EndTxn: 4 of the 9 sequential round trips of each batch's transaction
 * (bench/README.md, "Verdict latency"). A coordinator only moves when its broker fails or the
 * partition of `__transaction_state` / `__consumer_offsets` is reassigned, and a request to the
 * old one then fails; so the answer is kept per client until a request to that coordinator
 * fails, and looked up again after.
 *
 * kafkajs has no hook for this, so `Cluster.prototype.findGroupCoordinator` is wrapped (once,
 * idempotently). The wrapper changes nothing for a cluster unless (1) its Kafka client was
 * opted in with `cacheTransactionCoordinators(kafka)` and (2) the cluster has asked for a
 * transaction coordinator, i.e. it is a transactional producer's: consumers and admins of the
 * same client keep kafkajs' own behaviour.
 */
import type { Kafka } from 'kafkajs';

/** kafkajs' `COORDINATOR_TYPES.TRANSACTION` (src/protocol/coordinatorTypes.js). */
const TRANSACTION = 1;

/**
 * The coordinator answered, so it is still the coordinator: kafkajs retries these on the same
 * broker, and a lookup before each retry would only add a round trip (KAFKA-5477).
 */
const COORDINATOR_STILL_VALID = new Set(['CONCURRENT_TRANSACTIONS']);

export interface FindCoordinatorArgs {
  groupId: string;
  coordinatorType?: number;
}

/** The part of a kafkajs Broker the cache relies on. */
export interface CoordinatorBroker {
  nodeId: number;
}

/** The part of kafkajs' Cluster the cache relies on (a fake one in unit tests). */
export interface ClusterLike {
  rootLogger: object;
  findBroker(args: { nodeId: number }): Promise<CoordinatorBroker>;
  findGroupCoordinator(args: FindCoordinatorArgs): Promise<CoordinatorBroker>;
}

type FindGroupCoordinator = ClusterLike['findGroupCoordinator'];

interface ClusterPrototype {
  findGroupCoordinator: FindGroupCoordinator;
}

const WRAPPED = Symbol('compaction-guard:coordinatorCache');

/** Root loggers of opted-in Kafka clients: every cluster of a client shares its root logger. */
const optedIn = new WeakSet<object>();
/** Per transactional cluster: `${coordinatorType}:${groupId}` → coordinator's node id. */
const caches = new WeakMap<ClusterLike, Map<string, number>>();

/** Opts a kafkajs client's transactional producers in (producers created before or after). */
export function cacheTransactionCoordinators(kafka: Kafka): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  wrapFindGroupCoordinator(require('kafkajs/src/cluster').prototype as ClusterPrototype);
  optInClient(kafka.logger());
}

/** Opts in the clusters whose `rootLogger` is this (a Kafka client's `logger()`). */
export function optInClient(rootLogger: object): void {
  optedIn.add(rootLogger);
}

/** Exported for unit tests (a fake Cluster class); `cacheTransactionCoordinators` uses it. */
export function wrapFindGroupCoordinator(proto: ClusterPrototype): void {
  const original = proto.findGroupCoordinator as FindGroupCoordinator & { [WRAPPED]?: true };
  if (original[WRAPPED]) return;
  const wrapped = async function findGroupCoordinator(
    this: ClusterLike,
    args: FindCoordinatorArgs,
  ): Promise<CoordinatorBroker> {
    if (!optedIn.has(this.rootLogger)) return original.call(this, args);
    let cache = caches.get(this);
    if (cache === undefined) {
      if (args.coordinatorType !== TRANSACTION) return original.call(this, args);
      cache = new Map();
      caches.set(this, cache);
    }
    const key = `${args.coordinatorType ?? 0}:${args.groupId}`;
    const known = cache.get(key);
    if (known !== undefined) {
      try {
        // A local lookup in the broker pool (connecting if needed), no request.
        const broker = await this.findBroker({ nodeId: known });
        return dropOnFailure(broker, cache, key, known);
      } catch {
        // The node left the metadata or cannot be reached: ask again below.
        forget(cache, key, known);
      }
    }
    const broker = await original.call(this, args);
    cache.set(key, broker.nodeId);
    return dropOnFailure(broker, cache, key, broker.nodeId);
  } as FindGroupCoordinator & { [WRAPPED]?: true };
  wrapped[WRAPPED] = true;
  proto.findGroupCoordinator = wrapped;
}

function forget(cache: Map<string, number>, key: string, nodeId: number): void {
  // Only if no newer answer replaced it meanwhile.
  if (cache.get(key) !== nodeId) return;
  cache.delete(key);
}

/**
 * The broker as kafkajs uses it, except that a failed request through it (NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, a dropped connection, a timeout, ...) forgets the cached answer,
 * so kafkajs' own retry, or the processor's next attempt, looks the coordinator up again.
 */
function dropOnFailure<B extends CoordinatorBroker>(
  broker: B,
  cache: Map<string, number>,
  key: string,
  nodeId: number,
): B {
  return new Proxy(broker, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((e: unknown) => {
          if (!COORDINATOR_STILL_VALID.has(String((e as { type?: unknown })?.type)))
            forget(cache, key, nodeId);
          throw e;
        });
      };
    },
  });
}
