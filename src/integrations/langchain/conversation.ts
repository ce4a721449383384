/**
 * One conversation as the guard follows it: which message of the agent's state is which turn of
 * the session (or the summary standing for `[0, V)`), and every message ever seen, serialized
 * losslessly for spills (the agent's state forgets what a summary replaced; a spill must not).
 */
import {
  type BaseMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
} from '@langchain/core/messages';
import { randomUUID } from 'node:crypto';
import type { Pin, Policy, Span, Unit } from '../../engine/events';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { transcriptLines } from '../../client/transcript';
import { ContextPositions } from '../compaction/positions';
import { type PinClassifier, roleOf } from './pins';

export type TokenCounter = (messages: BaseMessage[]) => number | Promise<number>;

/** The message exactly as it was, under a new id (a copy is a new turn). */
export function verbatimCopy(m: BaseMessage): BaseMessage {
  const [copy] = mapStoredMessagesToChatMessages(mapChatMessagesToStoredMessages([m]));
  copy!.id = randomUUID();
  return copy!;
}

export class Conversation {
  readonly positions: ContextPositions<string>;
  private readonly transcript: string[] = [];

  constructor(
    readonly session: GuardedSession,
    policy: Policy,
    private readonly classify: PinClassifier,
    keptPins: readonly Pin[],
  ) {
    this.positions = new ContextPositions(session, policy, keptPins);
  }

  get unit(): Unit {
    return this.positions.unit;
  }

  /** Where a followed message stands, in the floor unit. */
  span(m: BaseMessage): Span {
    return this.positions.span(m.id!);
  }

  /** Every message not seen before becomes a turn, sized by `count` (the summarization's counter). */
  async follow(messages: BaseMessage[], count: TokenCounter): Promise<void> {
    await this.positions.open();
    for (let index = 0; index < messages.length; index++) {
      const m = messages[index]!;
      m.id ??= randomUUID();
      if (this.positions.has(m.id)) continue;
      const role = roleOf(m);
      const tokens = Math.max(1, Math.ceil(await count([m])));
      const pins = this.classify(m, { role, index, messages });
      const p = await this.session.appendTurn({ role, tokens, messages: 1, pins });
      this.positions.add(m.id, p.turn, role, pins);
      this.record(p.turn, m);
    }
  }

  /**
   * After a committed compaction: the summary stands for `[0, tailStart)`, the kept keep their
   * turns, and each copy keepPinned put back is reported as a new turn (ContextPositions).
   */
  async compacted(
    summary: BaseMessage,
    preserved: readonly BaseMessage[],
    tailStart: number,
    copies: readonly { copy: BaseMessage; of: BaseMessage }[],
    count: TokenCounter,
  ): Promise<void> {
    summary.id ??= randomUUID();
    const putBack = [];
    for (const c of copies)
      putBack.push({
        key: c.copy.id!,
        of: c.of.id!,
        tokens: Math.max(1, Math.ceil(await count([c.copy]))),
      });
    const turns = await this.positions.compacted(
      summary.id,
      preserved.map((m) => m.id!),
      tailStart,
      putBack,
    );
    turns.forEach((p, i) => this.record(p.turn, copies[i]!.copy));
  }

  private record(turn: number, m: BaseMessage): void {
    this.transcript[turn] = JSON.stringify(mapChatMessagesToStoredMessages([m])[0]);
  }

  /**
   * The turns of `r`, one JSON line each (langchain's StoredMessage form). Throws when any turn
   * of `r` is not held (after `client.resume` the turns sent before the crash are not): the
   * spill then fails, rather than reporting a range as stored that it does not hold.
   */
  lines(r: TranscriptRange): string {
    return transcriptLines(this.transcript, r);
  }
}
