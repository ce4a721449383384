/**
 * Many sessions, keyed by sessionId, each event through its session's state. By default as
 * immutable values: every step makes a new state and earlier ones stay as they were (tests, the
 * decision benchmark). A caller that owns its states steps them in place with `evolveInPlace`
 * (step.ts): `audit` (src/audit/replay.ts, `SessionsInPlace`) and the Kafka processor, on a
 * batch's copies of its committed states (src/kafka/batch/planner.ts).
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

type Step = typeof evolve;

export class Fleet {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    readonly options: EngineOptions = engineOptions(),
    private readonly step: Step = evolve,
  ) {}

  /** Runs one event through its session and keeps the new state. */
  process(input: EngineInput, decidedAt: number): StepResult {
    const id = input.sessionId;
    const prev = this.sessions.get(id);
    const result = this.step(prev, input, decidedAt, this.options);
    // A new session, or a closed one past its grace period back as a fresh state (contract §4);
    // none when the event left none (an unauthorized out-of-band event, §4b).
    if (result.state !== undefined && result.state !== prev) this.sessions.set(id, result.state);
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

  /** Every session and its state (e.g. to compare with a processor's changelog). */
  entries(): IterableIterator<[string, SessionState]> {
    return this.sessions.entries();
  }
}
