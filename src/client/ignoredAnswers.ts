/**
 * A SpillWorker's memory of its last answer per session, to say when the processor ignored it
 * (`spillAnswerIgnored`): one error line per session naming the fix, not one per request (an
 * orchestrator polling with `awaitSpill` makes a new request each time the ignored answer is
 * read). Bounded: the oldest sessions are forgotten first.
 */
import type { Logger } from 'pino';
import type { SpillRequest } from '../engine/outputs';
import {
  type SpillAnswer,
  ignoredSpillAnswerMessage,
  spillAnswerIgnored,
  spillAnswerOf,
} from './spillAnswerCheck';

/** Sessions remembered at most (a few hundred bytes each). */
export const REMEMBERED_SESSIONS = 10_000;

export class IgnoredAnswers {
  /** The last answer per session, oldest first; `said`: its error line was logged. */
  private readonly last = new Map<string, { answer: SpillAnswer; said: boolean }>();

  constructor(
    private readonly log: Pick<Logger, 'error'>,
    private readonly capacity = REMEMBERED_SESSIONS,
  ) {}

  /** A request came: logs once when it asks again for what the last answer reported. */
  check(r: Pick<SpillRequest, 'sessionId' | 'requestId' | 'holes'>): void {
    const entry = this.last.get(r.sessionId);
    if (entry === undefined || entry.said || !spillAnswerIgnored(entry.answer, r.holes)) return;
    entry.said = true;
    this.log.error(
      { sessionId: r.sessionId },
      `SpillWorker: ${ignoredSpillAnswerMessage(r.sessionId, r.requestId, entry.answer)}`,
    );
  }

  /** The answer sent for a request of `sessionId`. */
  answered(sessionId: string, sent: { type: string }): void {
    const answer = spillAnswerOf(sent);
    if (answer === null) return;
    const said = this.last.get(sessionId)?.said ?? false;
    this.last.delete(sessionId);
    this.last.set(sessionId, { answer, said });
    if (this.last.size > this.capacity) this.last.delete(this.last.keys().next().value!);
  }
}
