/**
 * One read_committed consumer of the verdict topic per client, shared by every request of every
 * session (not one per request). A verdict is matched to its request by sessionId, requestId and
 * requestEventId, the eventId of the request it answers (contract §6): anyone who can write the
 * input topic can send a request under a session's seq and requestId and gets a verdict of its
 * own, which names its own eventId, never ours (test/integration/client.test.ts, "a forged
 * request under the victim's seq and requestId gets its own verdict"). Verdicts of other clients'
 * sessions are skipped before decoding.
 */
import { randomUUID } from 'node:crypto';
import type { TopicConsumer } from '../kafka/transport';
import type { KafkaConnection } from '../kafka/transport/connection';
import type { Logger } from 'pino';
import type { Verdict } from '../engine/outputs';
import type { RegistryCodec } from '../registry/codec';
import { verdictType } from '../schema/schemas';
import { SchemaReaders } from '../registry/schemaReaders';
import { GuardClosedError } from './errors';
import { withTimeout } from '../time';

/** Waits for the verdict that names the request `eventId` (a stored one re-emitted too, §5). */
interface Waiter {
  eventId: string;
  resolve: (v: Verdict) => void;
  reject: (e: Error) => void;
}

const key = (sessionId: string, requestId: string) => `${sessionId}\u0000${requestId}`;

/**
 * Whether `verdict` is the answer to our request `eventId`: it names it. Any other is not ours: a
 * verdict of a request someone else wrote under our seq and requestId, or of an earlier send.
 * One with no requestEventId (from a processor whose verdict schema has none) is never taken:
 * the wait runs out instead (fail closed), so processors are upgraded before clients
 * (test/unit/verdict-wait.test.ts, "answers"). Pure.
 */
export function answers(verdict: Pick<Verdict, 'requestEventId'>, eventId: string): boolean {
  return verdict.requestEventId === eventId;
}

export class VerdictListener {
  private readonly waiters = new Map<string, Waiter>();
  /** Sessions with a waiter: a verdict for any other key is not decoded. */
  private readonly sessions = new Map<string, number>();
  private readonly readers: SchemaReaders;
  private consumer: TopicConsumer | null = null;

  constructor(
    private readonly kafka: KafkaConnection,
    codec: RegistryCodec,
    private readonly topic: string,
    private readonly groupPrefix: string,
    private readonly log: Logger,
  ) {
    this.readers = new SchemaReaders(codec.registry);
  }

  /**
   * Joins a group of its own and returns once the consumer has fetched once, so its position
   * (the topic's end, read_committed) is fixed before any request is sent: a verdict can then
   * never be older than where the consumer starts.
   */
  async start(timeoutMs = 60_000): Promise<void> {
    const consumer = this.kafka.topicConsumer({
      groupId: `${this.groupPrefix}-${randomUUID()}`,
      topics: [this.topic],
      fromBeginning: false,
      maxWaitMs: 50,
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1_000,
      commitOffsets: false,
    });
    this.consumer = consumer;
    let firstFetch: () => void = () => undefined;
    const fetched = new Promise<void>((resolve) => (firstFetch = resolve));
    await consumer.start({
      fetched: () => firstFetch(),
      eachBatch: async (batch) => {
        for (const m of batch.messages) await this.onMessage(m.key, m.value);
      },
    });
    await withTimeout(
      fetched,
      timeoutMs,
      () => new Error(`verdict consumer on ${this.topic}: no fetch in ${timeoutMs} ms`),
    );
  }

  /** Stops consuming; requests still waiting fail with GuardClosedError (no verdict: no compaction). */
  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
    for (const w of this.waiters.values())
      w.reject(new GuardClosedError('the client was closed before the verdict came'));
    this.waiters.clear();
    this.sessions.clear();
  }

  /**
   * Registers the waiter before the request is sent, so a fast verdict cannot be missed. A
   * repeated requestId answered with the stored verdict of an earlier send still names the
   * request just received (contract §5), so the request's own eventId is all it takes.
   */
  expect(sessionId: string, requestId: string, eventId: string): Promise<Verdict> {
    const k = key(sessionId, requestId);
    if (this.waiters.has(k)) throw new Error(`already waiting for ${sessionId} / ${requestId}`);
    this.sessions.set(sessionId, (this.sessions.get(sessionId) ?? 0) + 1);
    return new Promise<Verdict>((resolve, reject) => {
      this.waiters.set(k, { eventId, resolve, reject });
    });
  }

  /** Stops waiting (a timeout, or the verdict came). */
  forget(sessionId: string, requestId: string): void {
    const k = key(sessionId, requestId);
    if (!this.waiters.delete(k)) return;
    const n = (this.sessions.get(sessionId) ?? 1) - 1;
    if (n <= 0) this.sessions.delete(sessionId);
    else this.sessions.set(sessionId, n);
  }

  get waiting(): number {
    return this.waiters.size;
  }

  private async onMessage(k: Buffer | null, value: Buffer | null): Promise<void> {
    if (k === null || value === null) return;
    const sessionId = k.toString('utf8');
    if (!this.sessions.has(sessionId)) return;
    let verdict: Verdict;
    try {
      verdict = await this.readers.read<Verdict>(verdictType, value, 'verdict');
    } catch (e) {
      this.log.warn({ err: e, sessionId }, 'undecodable verdict skipped');
      return;
    }
    const waiter = this.waiters.get(key(verdict.sessionId, verdict.requestId));
    if (!waiter || !answers(verdict, waiter.eventId)) return;
    this.forget(verdict.sessionId, verdict.requestId);
    waiter.resolve(verdict);
  }
}
