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
 * Any other move is a bug and throws an IllegalTransitionError (src/lifecycle.ts).
 */
import { IllegalTransitionError, Lifecycle, type TransitionTable } from '../lifecycle';
import { GuardClosedError, GuardNotConnectedError, GuardUsageError } from './errors';

export const CLIENT_STATES = ['new', 'connecting', 'open', 'closing', 'closed'] as const;

export type ClientState = (typeof CLIENT_STATES)[number];

/** The allowed moves: from a state (key) to any of its list. */
export const CLIENT_TRANSITIONS: TransitionTable<ClientState> = {
  new: ['connecting', 'closed'],
  connecting: ['open', 'closed'],
  open: ['closing'],
  closing: ['closed'],
  closed: [],
};

export class ClientLifecycle extends Lifecycle<ClientState> {
  constructor() {
    super(
      CLIENT_TRANSITIONS,
      'new',
      (from, to) =>
        new IllegalTransitionError('ILLEGAL_CLIENT_TRANSITION', 'GuardClient', from, to),
    );
  }

  /** `what` needs an open client: before, a GuardNotConnectedError; after, a GuardClosedError. */
  requireOpen(what: string): void {
    switch (this.state) {
      case 'open':
        return;
      case 'new':
      case 'connecting':
        throw new GuardNotConnectedError(
          `GuardClient.${what}: the client is not connected (${this.state}): call connect() first and wait for it`,
        );
      case 'closing':
      case 'closed':
        throw new GuardClosedError(`GuardClient.${what}: the client is ${this.state}`);
    }
  }

  /** `connect()` is taken once, on a new client. */
  requireNew(): void {
    if (this.state === 'new') return;
    if (this.state === 'closing' || this.state === 'closed')
      throw new GuardClosedError(`GuardClient.connect: the client is ${this.state}`);
    throw new GuardUsageError('connect', `the client is ${this.state} already`);
  }
}
