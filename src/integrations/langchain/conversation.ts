/**
 * One conversation as the guard follows it: which message of the agent's state is which turn of
 * the session (or the summary standing for `[0, V)`), and every message ever seen, serialized
 * losslessly for spills (the agent's state forgets what a summary replaced; a spill must not).
 */
import { type BaseMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages';
import { randomUUID } from 'node:crypto';
import type { Policy, Span, Unit } from '../../engine/events';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import { describeTurns } from '../../client/transcript';
import { type PinClassifier, roleOf } from './pins';

type Entry = { kind: 'turn'; turn: number } | { kind: 'summary' };
export type TokenCounter = (messages: BaseMessage[]) => number | Promise<number>;

export class Conversation {
  private readonly byId = new Map<string, Entry>();
  private readonly transcript: string[] = [];
  private verbatimStart = 0;
  private opened: boolean;

  constructor(
    readonly session: GuardedSession,
    private readonly policy: Policy,
    private readonly classify: PinClassifier,
  ) {
    this.opened = session.seq > 0;
  }

  get unit(): Unit {
    return this.policy.floor.unit;
  }

  /** Where a followed message stands, in the floor unit. */
  span(m: BaseMessage): Span {
    const e = this.byId.get(m.id!)!;
    if (e.kind === 'summary') return { start: 0, end: this.verbatimStart };
    return {
      start: this.session.startOf(e.turn, this.unit),
      end: this.session.startOf(e.turn + 1, this.unit),
    };
  }

  /** Every message not seen before becomes a turn, sized by `count` (the summarization's counter). */
  async follow(messages: BaseMessage[], count: TokenCounter): Promise<void> {
    if (!this.opened) {
      await this.session.open(this.policy);
      this.opened = true;
    }
    for (let index = 0; index < messages.length; index++) {
      const m = messages[index]!;
      m.id ??= randomUUID();
      if (this.byId.has(m.id)) continue;
      const role = roleOf(m);
      const tokens = Math.max(1, Math.ceil(await count([m])));
      const p = await this.session.appendTurn({
        role,
        tokens,
        messages: 1,
        pins: this.classify(m, { role, index, messages }),
      });
      this.byId.set(m.id, { kind: 'turn', turn: p.turn });
      this.transcript[p.turn] = JSON.stringify(mapChatMessagesToStoredMessages([m])[0]);
    }
  }

  /** After a committed compaction: the summary stands for `[0, tailStart)`, the kept keep their turns. */
  summarized(summary: BaseMessage, preserved: readonly BaseMessage[], tailStart: number): void {
    this.verbatimStart = Math.max(this.verbatimStart, tailStart);
    const kept = preserved.map((m) => [m.id!, this.byId.get(m.id!)!] as const);
    this.byId.clear();
    summary.id ??= randomUUID();
    this.byId.set(summary.id, { kind: 'summary' });
    for (const [id, e] of kept) this.byId.set(id, e);
  }

  /**
   * The turns of `r`, one JSON line each (langchain's StoredMessage form). Throws when any turn
   * of `r` is not held (after `client.resume` the turns sent before the crash are not): the
   * spill then fails, rather than reporting a range as stored that it does not hold.
   */
  lines(r: TranscriptRange): string {
    const missing: number[] = [];
    for (let t = r.firstTurn; t < r.endTurn; t++)
      if (this.transcript[t] === undefined) missing.push(t);
    if (missing.length > 0)
      throw new Error(
        `the conversation's transcript does not hold turns ${describeTurns(missing)} of [${r.firstTurn},${r.endTurn}) ` +
          '(sent before this process followed the session, e.g. before a resume): they cannot be spilled',
      );
    return this.transcript
      .slice(r.firstTurn, r.endTurn)
      .map((line) => `${line}\n`)
      .join('');
  }
}
