/**
 * Many sessions, keyed by sessionId: the one place the engine keeps states between events.
 * The Kafka processor keeps one per input partition; the offline `audit` keeps one per file.
 */
import {
  type EngineInput,
  type EngineOptions,
  type StepResult,
  evolve,
  evolveInPlace,
} from './evolve';
import type { SessionState } from './state';
import { ENGINE_VERSION } from './version';

export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

export function engineOptions(overrides: Partial<EngineOptions> = {}): EngineOptions {
  return { graceMs: DEFAULT_GRACE_MS, engineVersion: ENGINE_VERSION, ...overrides };
}

export interface FleetMode {
  /**
   * true: the fleet owns its states and changes them in place (fast; a state returned by
   * `process` or `get` changes with later events). false (default): every step makes a new
   * state value, so earlier ones stay as they were.
   */
  inPlace: boolean;
}

export class Fleet {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    readonly options: EngineOptions = engineOptions(),
    readonly mode: FleetMode = { inPlace: false },
  ) {}

  /** Runs one event through its session and keeps the new state. */
  process(input: EngineInput, decidedAt: number): StepResult {
    const id = input.sessionId;
    const prev = this.sessions.get(id);
    const step = this.mode.inPlace ? evolveInPlace : evolve;
    const result = step(prev, input, decidedAt, this.options);
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
