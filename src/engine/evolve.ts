/**
 * `evolve`: one input event through one session (contract §4) as a pure function: the input
 * state is never changed, the clock is passed in, and the same inputs give the same outputs.
 * The step itself is `evolveInPlace` (step.ts), which changes a state its caller owns; `evolve`
 * runs it on a copy.
 */
import { type EngineInput, type EngineOptions, type StepResult, evolveInPlace } from './step';
import { type SessionState, cloneState } from './state';

export type { EngineInput, EngineOptions, StepResult } from './step';

/**
 * `evolve(state, event)`: the next state of one session and what to publish, as a new value
 * (the input state is never changed). `decidedAt` is the processing time for verdicts
 * (offline: the request's occurredAt).
 */
export function evolve(
  prev: SessionState | undefined,
  e: EngineInput,
  decidedAt: number,
  options: EngineOptions,
): StepResult {
  const result = evolveInPlace(
    prev === undefined ? undefined : cloneState(prev),
    e,
    decidedAt,
    options,
  );
  // A redelivery changes nothing: the caller gets its own state back.
  return result.notes[0] === 'duplicate' ? { ...result, state: prev! } : result;
}
