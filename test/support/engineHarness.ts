/**
 * Runs event streams through the engine and picks its outputs apart, for the unit tests.
 * `decidedAt` is the event's occurredAt (the offline rule of contract §6) unless a clock is given.
 */
import {
  Fleet,
  engineOptions,
  type AuditRecord,
  type EngineInput,
  type EngineOptions,
  type Output,
  type Policy,
  type SessionState,
  type SpillRequest,
  type StepResult,
  type Unit,
  type Verdict,
} from '../../src/engine';
import type { IntervalSet } from '../../src/engine/intervals';

export interface Played {
  fleet: Fleet;
  steps: StepResult[];
  outputs: Output[];
  /** The last event's step. */
  last: StepResult;
  /** The state of the last event's session after the stream. */
  state: SessionState;
}

export function play(
  events: readonly EngineInput[],
  options: Partial<EngineOptions> = {},
  clock?: (e: EngineInput, i: number) => number,
): Played {
  const fleet = new Fleet(engineOptions(options));
  const steps = events.map((e, i) => fleet.process(e, clock ? clock(e, i) : (e.occurredAt ?? 0)));
  const last = steps[steps.length - 1];
  const lastEvent = events[events.length - 1];
  if (!last || !lastEvent) throw new Error('play needs at least one event');
  const state = fleet.get(lastEvent.sessionId);
  if (!state) throw new Error(`no state for ${lastEvent.sessionId}`);
  return { fleet, steps, outputs: steps.flatMap((s) => s.outputs), last, state };
}

export const verdictsOf = (o: readonly Output[]): Verdict[] =>
  o.filter((x) => x.record === 'verdict').map((x) => x.value as Verdict);
export const spillsOf = (o: readonly Output[]): SpillRequest[] =>
  o.filter((x) => x.record === 'spill-request').map((x) => x.value as SpillRequest);
export const auditsOf = (o: readonly Output[]): AuditRecord[] =>
  o.filter((x) => x.record === 'audit').map((x) => x.value as AuditRecord);
export const auditCodes = (o: readonly Output[]): string[] => auditsOf(o).map((a) => a.code);

/** The verdict of one step; throws when the step produced none. */
export function verdictOf(step: StepResult): Verdict {
  const [v, ...more] = verdictsOf(step.outputs);
  if (!v || more.length > 0) throw new Error(`expected one verdict, got ${1 + more.length}`);
  return v;
}

/** The spill request of one step, or null. */
export function spillOf(step: StepResult): SpillRequest | null {
  return spillsOf(step.outputs)[0] ?? null;
}

/** `{code, holes}` of each reason, holes as `[start, end]` pairs (unit checked separately). */
export function reasonsOf(v: Verdict): { code: string; holes: [number, number][] }[] {
  return v.reasons.map((r) => ({ code: r.code, holes: r.holes.map((h) => [h.start, h.end]) }));
}

/** An interval set as `[start, end]` pairs. */
export function pairs(set: IntervalSet | undefined): [number, number][] {
  const out: [number, number][] = [];
  if (!set) return out;
  for (let i = 0; i + 1 < set.length; i += 2) out.push([set[i]!, set[i + 1]!]);
  return out;
}

export const ALL_RULES = [
  'UNKNOWN_SESSION',
  'EVENT_GAP',
  'UNIT_MISMATCH',
  'INVALID_REQUEST',
  'FLOOR_NOT_IN_INPUT',
  'TRUNCATION_IN_FLOOR',
  'SEAM_HOLE',
  'TAIL_BELOW_FLOOR',
  'EVICTED_PINNED',
  'EVICTED_UNCOVERED',
] as const;
export const PINNED_RULES = ALL_RULES.filter((r) => r !== 'EVICTED_UNCOVERED');

export const UNITS: readonly Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];

/** A policy with the floor and truncator in `unit` (span `f`), trigger below ceiling. */
export function policyIn(unit: Unit, f: number, overrides: Partial<Policy> = {}): Policy {
  return {
    windowTokens: 200_000,
    triggerTokens: 150_000,
    ceilingTokens: 160_000,
    floor: { unit, span: f },
    truncatorUnit: unit,
    coverage: 'STRICT',
    spill: 'ENABLED',
    ...overrides,
  };
}

/** Freezes a value and everything reachable from it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
