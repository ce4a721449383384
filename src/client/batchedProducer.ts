/**
 * The client's one way onto the input topic, shared by all its sessions: one produce request at
 * a time, in call order, batching whatever queued up meanwhile. Per-session order is
 * the contract's first need (contract §3: seq is +1 per event, §8: partitioned by sessionId),
 * and an idempotent producer keeps it only with one request in flight; batching keeps
 * throughput with many sessions sending at once (one produce request carries every session's
 * waiting events).
 */
import type { OutRecord, PlainProducer } from '../kafka/transport';

interface Queued {
  message: OutRecord;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * After a failed batch, which of the messages queued meanwhile may still go: not those of a key
 * (a session) the batch carried, which would land after the hole the failure left (contract §3:
 * seq +1 per event). Rejected, their session fails too and its resume sends every unacknowledged
 * event again, in seq order. Pure.
 */
export function queuedAfterFailure<Q extends { message: OutRecord }>(
  queue: readonly Q[],
  failed: readonly Q[],
): { send: Q[]; reject: Q[] } {
  const keys = new Set(failed.map((q) => String(q.message.key)));
  const send: Q[] = [];
  const reject: Q[] = [];
  for (const q of queue) (keys.has(String(q.message.key)) ? reject : send).push(q);
  return { send, reject };
}

/** Most messages per produce request (the broker's 1 MiB batch limit stays far away). */
const MAX_BATCH = 500;

export class BatchedProducer {
  private queue: Queued[] = [];
  private running = false;
  /** Told when the queue has run dry: what `flushed()` waits on (nothing polls). */
  private idle: { done: Promise<void>; resolve: () => void } | null = null;

  private readonly partitionCounts: ReadonlyMap<string, number>;

  constructor(
    private readonly producer: PlainProducer,
    private readonly topic: string,
    /** The topic's partitions: each message is pinned to its partition by its key. */
    partitions: number,
  ) {
    this.partitionCounts = new Map([[topic, partitions]]);
  }

  /**
   * Resolves once the broker acknowledged the message (acks = all), checked partition by
   * partition (PlainProducer.send): kafkajs' own retry can leave a partition unsent and still
   * resolve (kafkajs#1303), which would be a lost event and a seq gap for the processor.
   */
  send(message: OutRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /**
   * Resolves when nothing is queued or being sent any more (each message sent or failed),
   * at once when that is so already: the drain tells it as it stops.
   */
  flushed(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    if (this.idle === null) {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      this.idle = { done, resolve };
    }
    return this.idle.done;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          // A batch's unacknowledged partitions are sent again before the next batch: order holds.
          await this.producer.send(
            [{ topic: this.topic, messages: batch.map((q) => q.message) }],
            this.partitionCounts,
          );
          for (const q of batch) q.resolve();
        } catch (e) {
          for (const q of batch) q.reject(e as Error);
          const { send, reject } = queuedAfterFailure(this.queue, batch);
          this.queue = send;
          for (const q of reject) q.reject(e as Error);
        }
      }
    } finally {
      // The queue is empty here (the loop ends only so, and a send meanwhile joins the loop).
      this.running = false;
      const idle = this.idle;
      this.idle = null;
      idle?.resolve();
    }
  }
}
