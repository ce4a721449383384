/**
 * A SpillWorker's memory of its answers per session, to say when the processor ignored them
 * (`spillAnswerIgnored`): one error line per session naming the fix, not one per request (an
 * orchestrator polling with `awaitSpill` makes a new request each time an ignored answer is
 * read). Unlike the client's own loop, the worker's answer and the next request come from two
 * producers: only a request made after the answer was acknowledged is surely decided after it
 * (both are keyed by the session, so they share a partition). So a request counts only when its
 * requestedAt (the orchestrator's clock) is more than CLOCK_MARGIN_MS after the first of the
 * worker's answers over the same range (the worker's clock): a backlog read at start-up, or a
 * request made while the answer was on its way, tells nothing (docs/decisions.md 170).
 * Bounded: the oldest sessions are forgotten first.
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

/** How far the orchestrator's clock may be ahead of the worker's without a wrong line. */
export const CLOCK_MARGIN_MS = 2_000;

interface Answered {
  answer: SpillAnswer;
  /** When the first answer of this kind and range was acknowledged (the worker's clock). */
  since: number;
  /** Its error line was logged. */
  said: boolean;
}

const sameAnswer = (a: SpillAnswer, b: SpillAnswer): boolean =>
  a.type === b.type &&
  (a.signature?.keyId ?? null) === (b.signature?.keyId ?? null) &&
  (a.type !== 'SpillCompleted' ||
    (b.type === 'SpillCompleted' &&
      a.unit === b.unit &&
      a.range.start === b.range.start &&
      a.range.end === b.range.end));

export class IgnoredAnswers {
  private readonly last = new Map<string, Answered>();

  constructor(
    private readonly log: Pick<Logger, 'error'>,
    private readonly now: () => number = Date.now,
    private readonly capacity = REMEMBERED_SESSIONS,
  ) {}

  /** A request came: logs once when, made after an answer, it asks again for what it reported. */
  check(r: Pick<SpillRequest, 'sessionId' | 'requestId' | 'holes' | 'requestedAt'>): void {
    const entry = this.last.get(r.sessionId);
    if (entry === undefined || entry.said || r.requestedAt <= entry.since + CLOCK_MARGIN_MS) return;
    if (!spillAnswerIgnored(entry.answer, r.holes)) return;
    entry.said = true;
    this.log.error(
      { sessionId: r.sessionId },
      `SpillWorker: ${ignoredSpillAnswerMessage(r.sessionId, r.requestId, entry.answer)}`,
    );
  }

  /** The answer sent (and acknowledged) for a request of `sessionId`. */
  answered(sessionId: string, sent: { type: string }): void {
    const answer = spillAnswerOf(sent);
    if (answer === null) return;
    const before = this.last.get(sessionId);
    const same = before !== undefined && sameAnswer(before.answer, answer);
    this.last.delete(sessionId);
    this.last.set(sessionId, {
      answer,
      since: same ? before.since : this.now(),
      said: before?.said ?? false,
    });
    if (this.last.size > this.capacity) this.last.delete(this.last.keys().next().value!);
  }
}
