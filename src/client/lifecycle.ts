/**
 * The life of a GuardClient as named states and checked transitions:
 *
 *   new ──▶ connecting ──▶ open ──▶ closing ──▶ closed   (terminal)
 *    │          │                                 ▲
 *    └──────────┴─────────────────────────────────┘
 *
 * - new: constructed; nothing is open.
 * - connecting: `connect()` runs: settings, preflight, topics, schemas, producer, consumer.
 * - open: sessions may be made and events sent; the only state in which they are.
 * - closing: `close()` runs: what was sent is flushed, the consumer and producer stop.
 * - closed: nothing is open; a failed `connect()` ends here too, having closed what it opened,
 *   and so does `close()` before `connect()`.
 *
 * Any other move is a bug and throws.
 */
import { GuardClosedError, GuardNotConnectedError, GuardUsageError } from './errors';

export const CLIENT_STATES = ['new', 'connecting', 'open', 'closing', 'closed'] as const;

export type ClientState = (typeof CLIENT_STATES)[number];

/** The allowed moves: from a state (key) to any of its list. */
export const CLIENT_TRANSITIONS: Readonly<Record<ClientState, readonly ClientState[]>> = {
  new: ['connecting', 'closed'],
  connecting: ['open', 'closed'],
  open: ['closing'],
  closing: ['closed'],
  closed: [],
};

export class ClientLifecycle {
  private current: ClientState = 'new';

  get state(): ClientState {
    return this.current;
  }

  to(next: ClientState): void {
    if (!CLIENT_TRANSITIONS[this.current].includes(next))
      throw new Error(`GuardClient: illegal lifecycle transition ${this.current} -> ${next}`);
    this.current = next;
  }

  /** `what` needs an open client: before, a GuardNotConnectedError; after, a GuardClosedError. */
  requireOpen(what: string): void {
    switch (this.current) {
      case 'open':
        return;
      case 'new':
      case 'connecting':
        throw new GuardNotConnectedError(
          `GuardClient.${what}: the client is not connected (${this.current}): call connect() first and wait for it`,
        );
      case 'closing':
      case 'closed':
        throw new GuardClosedError(`GuardClient.${what}: the client is ${this.current}`);
    }
  }

  /** `connect()` is taken once, on a new client. */
  requireNew(): void {
    if (this.current === 'new') return;
    if (this.current === 'closing' || this.current === 'closed')
      throw new GuardClosedError(`GuardClient.connect: the client is ${this.current}`);
    throw new GuardUsageError('connect', `the client is ${this.current} already`);
  }
}
