/**
 * A session's outbox, its way to Kafka: one event at a time in call order (so seq order is call order),
 * at most MAX_IN_FLIGHT unacknowledged, each persisted (when asked) before it is sent. A send
 * that fails, or a snapshot that cannot be persisted, leaves the session's sequence in doubt:
 * the outbox then refuses every later event until the session is resumed from its snapshot.
 */
import type { ContextEvent } from '../../engine/events';
import { Serial } from '../../serial';
import { GuardSendError } from '../errors';

/**
 * Most events of one session in flight (sent, not yet acknowledged). A resume sends them again,
 * and the processor recognises a resend only among the eventIds of the 32 highest seqs it
 * accepted (contract §4): with at most 16 in flight every resend is within that window.
 */
export const MAX_IN_FLIGHT = 16;

export interface OutboxTransport {
  /** Resolves when the broker acknowledged the event. */
  send(event: ContextEvent): Promise<void>;
  /** Persists the session (it lists the event as pending already); null: nothing to persist. */
  persist: (() => void | Promise<void>) | null;
  /** The broker acknowledged the event. */
  acknowledged(event: ContextEvent): void;
}

type OutboxState = { kind: 'sending' } | { kind: 'failed'; cause: Error };

export class SessionOutbox {
  private state: OutboxState = { kind: 'sending' };
  private readonly order = new Serial();
  /** Each unacknowledged event's send, settled either way, oldest first. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly sessionId: string,
    private readonly transport: OutboxTransport,
  ) {}

  /**
   * One event: `prepare` runs after the previous event was handed over and once fewer than
   * MAX_IN_FLIGHT are unacknowledged; it returns the event (recorded in the session) or throws
   * (nothing is sent). Resolves with the event once the broker acknowledged it.
   */
  submit<E extends ContextEvent>(prepare: () => E): Promise<E> {
    // The next event waits only until this one is handed over, not for its acknowledgement.
    const handedOver = this.order.run(async () => {
      await this.roomInFlight();
      this.requireSending();
      const event = prepare();
      await this.persist();
      return { event, acknowledged: this.send(event) };
    });
    return handedOver.then(async ({ event, acknowledged }) => {
      await acknowledged;
      return event;
    });
  }

  private async roomInFlight(): Promise<void> {
    while (this.inFlight.size >= MAX_IN_FLIGHT) await this.inFlight.values().next().value;
  }

  private requireSending(): void {
    if (this.state.kind === 'failed')
      throw new GuardSendError(
        `session ${this.sessionId}: an earlier send failed (${this.state.cause.message}); resume it from its snapshot`,
      );
  }

  private async persist(): Promise<void> {
    if (this.transport.persist === null) return;
    try {
      await this.transport.persist();
    } catch (e) {
      // Counted but neither persisted nor sent: only a resume from the last snapshot is safe.
      this.state = { kind: 'failed', cause: e as Error };
      throw e;
    }
  }

  private send(event: ContextEvent): Promise<void> {
    const acknowledged = this.transport.send(event).then(
      () => this.transport.acknowledged(event),
      (e: Error) => {
        this.state = { kind: 'failed', cause: e };
        throw new GuardSendError(`session ${this.sessionId} seq ${event.seq}: ${e.message}`, {
          cause: e,
        });
      },
    );
    // Its caller gets the failure through `acknowledged`; here it only frees a place in flight.
    const settled = acknowledged.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return acknowledged;
  }
}
