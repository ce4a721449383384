/**
 * An experiment kept for the engine benchmark, not the product (docs/decisions.md 64): many
 * sessions owned by one caller and changed in place, an ordinary turn handled on the fleet-wide
 * `TurnArena` without touching the state object. Same outputs as `Fleet` (and as folding
 * `evolve`) for every event (test/unit/owned-fleet.test.ts). `audit` and the processor both
 * run `evolveInPlace` on states they own instead (src/audit/replay.ts, src/kafka/batch/planner.ts).
 *
 * A state obtained from `get` or `entries` is current until the next `process`, `set` or
 * `delete`; ask again after that.
 */
import {
  type EngineInput,
  type EngineOptions,
  type StepResult,
  evolveInPlace,
} from '../../src/engine/step';
import { MAX_RANGES } from '../../src/engine/coarsen';
import { pinTurn } from '../../src/engine/apply';
import { engineOptions } from '../../src/engine/fleet';
import type { SessionState } from '../../src/engine/state';
import { TurnArena } from './turnArena';

/** What one event published. */
export type FleetStep = Pick<StepResult, 'outputs' | 'notes'>;

const NOTHING: FleetStep = Object.freeze({
  outputs: Object.freeze([]) as unknown as FleetStep['outputs'],
  notes: Object.freeze([]) as unknown as FleetStep['notes'],
});

export class OwnedFleet {
  private readonly slots = new Map<string, number>();
  /** By slot; undefined for a freed slot. */
  private readonly states: (SessionState | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly arena = new TurnArena();

  constructor(readonly options: EngineOptions = engineOptions()) {}

  /** Runs one event through its session. */
  process(input: EngineInput, decidedAt: number): FleetStep {
    const slot = this.slots.get(input.sessionId);
    if (slot === undefined) {
      const result = evolveInPlace(undefined, input, decidedAt, this.options);
      // None when the event left none (an unauthorized out-of-band event, contract §4b).
      if (result.state !== undefined) this.place(input.sessionId, result.state);
      return result;
    }
    if (
      input.type === 'TurnAppended' &&
      // A pin that could push the pins past 128 ranges takes the general path (§4a).
      (input.pins.length === 0 || this.states[slot]!.pins.length < 2 * MAX_RANGES) &&
      this.arena.appendInOrder(slot, input, this.options.idleMs)
    ) {
      // Only a pinned turn touches the state object: its span joins the pins.
      if (input.pins.length > 0) {
        const state = this.states[slot]!;
        pinTurn(state, input, state.unit!);
      }
      return NOTHING;
    }
    const owned = this.states[slot]!;
    this.arena.flush(slot, owned);
    const result = evolveInPlace(owned, input, decidedAt, this.options);
    // A closed session past its grace period comes back as a fresh state (contract §4); a
    // session that had one always has one after.
    const next = result.state!;
    this.states[slot] = next;
    this.arena.load(slot, next);
    return result;
  }

  get(sessionId: string): SessionState | undefined {
    const slot = this.slots.get(sessionId);
    return slot === undefined ? undefined : this.current(slot);
  }

  /** The fleet takes `state` over and changes it with later events. */
  set(sessionId: string, state: SessionState): void {
    const slot = this.slots.get(sessionId);
    if (slot === undefined) {
      this.place(sessionId, state);
      return;
    }
    this.states[slot] = state;
    this.arena.load(slot, state);
  }

  delete(sessionId: string): boolean {
    const slot = this.slots.get(sessionId);
    if (slot === undefined) return false;
    this.slots.delete(sessionId);
    this.states[slot] = undefined;
    this.arena.drop(slot);
    this.freeSlots.push(slot);
    return true;
  }

  get size(): number {
    return this.slots.size;
  }

  /** Bytes of the turn arena (typed arrays, outside the JS heap). */
  get arenaBytes(): number {
    return this.arena.bytes;
  }

  *entries(): IterableIterator<[string, SessionState]> {
    for (const [sessionId, slot] of this.slots) yield [sessionId, this.current(slot)];
  }

  /** The session's state with the arena's values written back (the slot turns cold). */
  private current(slot: number): SessionState {
    const state = this.states[slot]!;
    this.arena.flush(slot, state);
    return state;
  }

  private place(sessionId: string, state: SessionState): void {
    const slot = this.freeSlots.pop() ?? this.states.length;
    if (slot === this.states.length) this.states.push(state);
    else this.states[slot] = state;
    this.slots.set(sessionId, slot);
    this.arena.reserve(slot + 1);
    this.arena.load(slot, state);
  }
}
