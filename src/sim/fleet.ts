/**
 * A deterministic fleet: many sessions' events, randomly interleaved (each session's own
 * order kept), from one seed. Used by the simulator CLI, tests and benchmarks.
 */
import type { ContextEvent } from '../engine/events';
import { OrchestratorModel, type SessionPlan, planSession } from './orchestrator';
import { Rng, deriveSeed } from './prng';

export interface FleetOptions {
  /** Sessions live at any time; a session that closes hands its slot to a new one. */
  sessions: number;
  /** Total events to generate. */
  events: number;
  seed: number;
  /** Share of sessions with the faulty profile (default 0.1). */
  faultyShare?: number;
  /** Faulty sessions spill (or acknowledge) and retry after a request predicted refused (default true). */
  spillAck?: boolean;
  /** occurredAt of the first event, epoch ms (default 2026-01-01T00:00:00Z). */
  startTime?: number;
  /** Fleet clock step per event, ms (default 1: 1,000 events/s). */
  stepMs?: number;
  /** Share of sessions that close (SessionClosed) after 30 to 600 of their events (default 0.05). */
  closeShare?: number;
  /** sessionIds are `<prefix>-<n>` (default "sim"). */
  sessionPrefix?: string;
}

export const DEFAULT_START_TIME = 1_767_225_600_000;

/** The most a session's activity weight can be (see `SessionPlan.activity`). */
const MAX_ACTIVITY = 4;

/**
 * The fleet as an iterator of events. `plans` holds every session started so far (so a test
 * can tell which sessions are faulty), `models` the live ones.
 */
export class FleetSimulation implements IterableIterator<ContextEvent> {
  readonly plans = new Map<string, SessionPlan>();
  private readonly slots: OrchestratorModel[] = [];
  /** The slots' activity weights, compact: the rejection loop reads only this. */
  private readonly activity: Uint8Array;
  private readonly rng: Rng;
  private readonly options: Required<FleetOptions>;
  private started = 0;
  private emittedCount = 0;

  constructor(options: FleetOptions) {
    if (!(options.sessions >= 1)) throw new RangeError('sessions must be at least 1');
    this.options = {
      faultyShare: 0.1,
      spillAck: true,
      startTime: DEFAULT_START_TIME,
      stepMs: 1,
      closeShare: 0.05,
      sessionPrefix: 'sim',
      ...options,
    };
    this.rng = new Rng(deriveSeed(options.seed, -1));
    this.activity = new Uint8Array(options.sessions);
    for (let i = 0; i < options.sessions; i++) this.fill(i);
  }

  /** Events emitted so far. */
  get emitted(): number {
    return this.emittedCount;
  }

  /** Sessions started so far (more than `sessions` once some closed). */
  get sessionsStarted(): number {
    return this.started;
  }

  /** The live sessions' models. */
  get models(): readonly OrchestratorModel[] {
    return this.slots;
  }

  private fill(slot: number): void {
    const model = this.startSession();
    this.slots[slot] = model;
    this.activity[slot] = model.plan.activity;
  }

  private startSession(): OrchestratorModel {
    const o = this.options;
    const n = this.started++;
    const plan = planSession({
      sessionId: `${o.sessionPrefix}-${n}`,
      seed: deriveSeed(o.seed, n),
      faultyShare: o.faultyShare,
      spillAck: o.spillAck,
      closeShare: o.closeShare,
    });
    this.plans.set(plan.sessionId, plan);
    return new OrchestratorModel(plan);
  }

  next(): IteratorResult<ContextEvent> {
    if (this.emittedCount >= this.options.events) return { done: true, value: undefined };
    // A random live session, with probability proportional to its activity (rejection).
    const n = this.slots.length;
    let slot = this.rng.int(n);
    while (this.rng.int(MAX_ACTIVITY) >= this.activity[slot]!) slot = this.rng.int(n);
    const model = this.slots[slot]!;
    const at = this.options.startTime + Math.floor(this.emittedCount * this.options.stepMs);
    const event = model.next(at)!;
    if (model.done) this.fill(slot);
    this.emittedCount++;
    return { done: false, value: event };
  }

  [Symbol.iterator](): IterableIterator<ContextEvent> {
    return this;
  }
}

/** The fleet's events as an iterator (see `FleetSimulation`). */
export function generateFleet(options: FleetOptions): FleetSimulation {
  return new FleetSimulation(options);
}

/** All of the fleet's events in an array, and the plans of its sessions. */
export function generateFleetArray(options: FleetOptions): {
  events: ContextEvent[];
  plans: Map<string, SessionPlan>;
} {
  const sim = new FleetSimulation(options);
  const events = new Array<ContextEvent>(options.events);
  let i = 0;
  for (let r = sim.next(); !r.done; r = sim.next()) events[i++] = r.value;
  events.length = i;
  return { events, plans: sim.plans };
}
