/**
 * Many sessions, keyed by sessionId: the one place the engine keeps states between events.
 * The Kafka processor keeps one per input partition; the offline `audit` keeps one per file.
 */
import { type EngineInput, type EngineOptions, type StepResult, evolve } from './evolve';
import type { SessionState } from './state';
import { ENGINE_VERSION } from './version';

export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

export function engineOptions(overrides: Partial<EngineOptions> = {}): EngineOptions {
  return { graceMs: DEFAULT_GRACE_MS, engineVersion: ENGINE_VERSION, ...overrides };
}

export class Fleet {
  private readonly sessions = new Map<string, SessionState>();

  constructor(readonly options: EngineOptions = engineOptions()) {}

  /** Runs one event through its session and keeps the new state. */
  process(input: EngineInput, decidedAt: number): StepResult {
    const result = evolve(this.sessions.get(input.sessionId), input, decidedAt, this.options);
    this.sessions.set(input.sessionId, result.state);
    return result;
  }

  get(sessionId: string): SessionState | undefined {
    return this.sessions.get(sessionId);
  }

  set(sessionId: string, state: SessionState): void {
    this.sessions.set(sessionId, state);
  }

  delete(sessionId: string): boolean {
    return this.sessions.delete(sessionId);
  }

  get size(): number {
    return this.sessions.size;
  }

  entries(): IterableIterator<[string, SessionState]> {
    return this.sessions.entries();
  }
}
