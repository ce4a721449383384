/**
 * One AI SDK conversation as the guard follows it. The SDK's messages carry no ids, so a
 * message is known by its place: each call's messages must begin with the messages the helper
 * last saw or returned (the same objects, or equal ones), and whatever follows them is new.
 * Every message ever followed is kept as one JSON line per turn for spills: a spill must hold
 * the whole transcript, so a turn missing from it fails the spill (SpillFailed) rather than
 * storing less than it claims.
 */
import type { ModelMessage } from 'ai';
import type { Pin, Policy, Span } from '../../engine/events';
import { GuardUsageError } from '../../client/errors';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { transcriptLines } from '../../client/transcript';
import { ContextPositions } from '../compaction/positions';
import { type PinClassifier, roleOf, type TokenCounter, transcriptLine } from './messages';

const same = (a: ModelMessage, b: ModelMessage) =>
  a === b || transcriptLine(a) === transcriptLine(b);

export class TrackedContext {
  readonly positions: ContextPositions<ModelMessage>;
  /** The context as last followed or returned, in the order the model sees it. */
  private seen: ModelMessage[] = [];
  private readonly transcript: string[] = [];

  constructor(
    readonly session: GuardedSession,
    policy: Policy,
    private readonly classify: PinClassifier,
    keptPins: readonly Pin[],
  ) {
    this.positions = new ContextPositions(session, policy, keptPins);
  }

  span(m: ModelMessage): Span {
    return this.positions.span(m);
  }

  /** The new messages (after those seen) become turns, sized by `count`. */
  async follow(messages: readonly ModelMessage[], count: TokenCounter): Promise<void> {
    await this.positions.open();
    if (messages.length < this.seen.length)
      throw new GuardUsageError(
        'messages',
        `${messages.length} messages, fewer than the ${this.seen.length} the guard saw: messages were removed outside compaction-guard (compact only through it)`,
      );
    this.seen.forEach((known, i) => {
      const m = messages[i]!;
      if (!same(known, m))
        throw new GuardUsageError(
          `messages[${i}]`,
          'not the message the guard saw there: the history was changed outside compaction-guard (compact only through it)',
        );
      this.positions.rekey(known, m);
    });
    for (let index = this.seen.length; index < messages.length; index++) {
      const m = messages[index]!;
      const role = roleOf(m);
      const tokens = Math.max(1, Math.ceil(await count([m])));
      const pins = this.classify(m, { role, index, messages });
      const p = await this.session.appendTurn({ role, tokens, messages: 1, pins });
      this.positions.add(m, p.turn, role, pins);
      this.transcript[p.turn] = transcriptLine(m);
    }
    this.seen = [...messages];
  }

  /** After a committed compaction: `next` is the context now; the copies are new turns. */
  async compacted(
    next: readonly ModelMessage[],
    preserved: readonly ModelMessage[],
    tailStart: number,
    copies: readonly { copy: ModelMessage; of: ModelMessage }[],
    count: TokenCounter,
  ): Promise<void> {
    const putBack = [];
    for (const c of copies)
      putBack.push({
        key: c.copy,
        of: c.of,
        tokens: Math.max(1, Math.ceil(await count([c.copy]))),
      });
    const turns = await this.positions.compacted(next[0]!, preserved, tailStart, putBack);
    turns.forEach((p, i) => (this.transcript[p.turn] = transcriptLine(copies[i]!.copy)));
    this.seen = [...next];
  }

  /** The turns of `r`, one JSON line each; throws when one of them was never followed here. */
  lines(r: TranscriptRange): string {
    return transcriptLines(this.transcript, r);
  }
}
