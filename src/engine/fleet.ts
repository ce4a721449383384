/**
 * Many sessions, keyed by sessionId, as immutable values: every step makes a new state and
 * earlier ones stay as they were (tests, the decision benchmark). A caller that owns its states
 * runs `evolveInPlace` (step.ts) on them instead: `audit` (src/audit/replay.ts) and the Kafka
 * processor, on a batch's copies of its committed states (src/kafka/batchStep.ts).
 */
import { type EngineInput, type EngineOptions, type StepResult, evolve } from './evolve';
import type { SessionState } from './state';
import { ENGINE_VERSION } from './version';

export const DEFAULT_GRACE_MS = 60 * 60 * 1000;
export const DEFAULT_IDLE_MS = 30 * 24 * 60 * 60 * 1000;

export function engineOptions(overrides: Partial<EngineOptions> = {}): EngineOptions {
  return {
    graceMs: DEFAULT_GRACE_MS,
    idleMs: DEFAULT_IDLE_MS,
    engineVersion: ENGINE_VERSION,
    trustedKeys: null,
    ...overrides,
  };
}

export class Fleet {
  private readonly sessions = new Map<string, SessionState>();

  constructor(readonly options: EngineOptions = engineOptions()) {}

  /** Runs one event through its session and keeps the new state. */
  process(input: EngineInput, decidedAt: number): StepResult {
    const id = input.sessionId;
    const prev = this.sessions.get(id);
    const result = evolve(prev, input, decidedAt, this.options);
    if (result.state !== prev) this.sessions.set(id, result.state);
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
