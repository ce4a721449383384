/**
 * One conversation as the guard follows it, for any framework (its MessageAdapter): which
 * message of the context is which turn of the session (or the summary standing for `[0, V)`),
 * and every message ever followed, one JSON line per turn, for spills. The framework's state
 * forgets what a summary replaced; a spill must not, so a turn missing from the transcript fails
 * the spill (SpillFailed) rather than storing less than it claims.
 */
import type { Pin, Policy, Span } from '../../engine/events';
import { GuardUsageError } from '../../client/errors';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { transcriptLines } from '../../client/transcript';
import { type MessageAdapter, type PinClassifier, type TokenCounter, turnTokens } from './adapter';
import { ContextPositions } from './positions';

export class GuardedConversation<M, K> {
  readonly positions: ContextPositions<K>;
  /** The context as last followed or returned, in the order the model sees it. */
  private seen: readonly M[] = [];
  private readonly transcript: string[] = [];

  constructor(
    readonly session: GuardedSession,
    policy: Policy,
    readonly adapter: MessageAdapter<M, K>,
    private readonly classify: PinClassifier<M>,
    keptPins: readonly Pin[],
  ) {
    this.positions = new ContextPositions(session, policy, keptPins);
  }

  /** Where a followed message stands, in the floor unit. */
  span(m: M): Span {
    return this.positions.span(this.adapter.key(m));
  }

  /** The messages in position order (ContextPositions.inPositionOrder). */
  inPositionOrder(messages: readonly M[]): M[] {
    return this.positions.inPositionOrder(messages, (m) => this.adapter.key(m));
  }

  /** The new messages become turns, sized by `count`; SessionOpened first, once. */
  async follow(messages: readonly M[], count: TokenCounter<M>): Promise<void> {
    await this.positions.open();
    for (const index of this.newIndices(messages)) {
      const m = messages[index]!;
      const role = this.adapter.role(m);
      const tokens = await turnTokens(count, m);
      const pins = this.classify(m, { role, index, messages });
      const p = await this.session.appendTurn({ role, tokens, messages: 1, pins });
      this.positions.add(this.adapter.key(m), p.turn, role, pins);
      this.transcript[p.turn] = this.adapter.transcriptLine(m);
    }
    this.seen = [...messages];
  }

  /**
   * After a committed compaction: `next` is the context now (the summary first), the preserved
   * keep their turns, and each copy keepPinned put back is a new turn (ContextPositions).
   */
  async compacted(
    next: readonly M[],
    preserved: readonly M[],
    tailStart: number,
    copies: readonly { copy: M; of: M }[],
    count: TokenCounter<M>,
  ): Promise<void> {
    const key = (m: M) => this.adapter.key(m);
    const putBack = [];
    for (const c of copies)
      putBack.push({ key: key(c.copy), of: key(c.of), tokens: await turnTokens(count, c.copy) });
    const summary = key(next[0]!);
    const turns = await this.positions.compacted(summary, preserved.map(key), tailStart, putBack);
    turns.forEach(
      (p, i) => (this.transcript[p.turn] = this.adapter.transcriptLine(copies[i]!.copy)),
    );
    this.seen = [...next];
  }

  /**
   * The turns of `r`, one JSON line each. Throws when any turn of `r` was never followed here
   * (after `client.resume` the turns sent before the crash are not): the spill then fails.
   */
  lines(r: TranscriptRange): string {
    return transcriptLines(this.transcript, r);
  }

  private newIndices(messages: readonly M[]): number[] {
    const all = messages.map((_, i) => i);
    if (this.adapter.identity === 'by-key')
      return all.filter((i) => !this.positions.has(this.adapter.key(messages[i]!)));
    this.matchSeen(messages);
    return all.slice(this.seen.length);
  }

  /** `by-place`: the messages begin with those seen, which keep their turns under the new objects. */
  private matchSeen(messages: readonly M[]): void {
    if (messages.length < this.seen.length)
      throw new GuardUsageError(
        'messages',
        `${messages.length} messages, fewer than the ${this.seen.length} the guard saw: messages were removed outside compaction-guard (compact only through it)`,
      );
    this.seen.forEach((known, i) => {
      const m = messages[i]!;
      if (!this.same(known, m))
        throw new GuardUsageError(
          `messages[${i}]`,
          'not the message the guard saw there: the history was changed outside compaction-guard (compact only through it)',
        );
      this.positions.rekey(this.adapter.key(known), this.adapter.key(m));
    });
  }

  private same(a: M, b: M): boolean {
    return a === b || this.adapter.transcriptLine(a) === this.adapter.transcriptLine(b);
  }
}
