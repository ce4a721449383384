/**
 * The capacity gate: memory bounded per instance, failing closed (docs/contract.md §8
 * "Capacity", docs/decisions.md 121, 124, 135). At most `CG_MAX_SESSIONS` sessions hold state.
 * At the cap the processor creates no new session state: the events of a session it does not
 * hold are counted and not stored, its requests are refused (UNKNOWN_SESSION, HALT, the
 * diagnostic naming the cap: atCapacityVerdict.ts), and its id joins the partition's refused
 * filter (refusedFilter.ts), so that once room frees it starts blind instead of as if it had no
 * past. Sessions held are never evicted to make room: one that lost its history could be
 * approved where its history would refuse. Room frees when idle or closed sessions expire (the
 * sweep, partition.ts); a session the sweep frees joins the refused filter too.
 *
 * Two parts: `SessionCapacity`, the instance's count against its cap (one, shared by the plans
 * of all its partitions), and `CapacityGate`, one plan's use of it: the places the plan took,
 * the partition's refused filter as the plan changes it, and the rules below. The planner
 * (src/kafka/batch/planner.ts) asks the gate; nothing else decides who may take a place.
 */
import { authorityOf } from '../../engine/authorize';
import type { EngineInput, EngineOptions } from '../../engine/evolve';
import { RefusedFilterView, type RefusedFilter } from './refusedFilter';

/**
 * The instance's count of sessions against its cap. `held` is the committed count over all
 * assigned partitions; batches being planned reserve a slot for each session they create, and
 * give the reservations back once their transaction committed (the committed count then has
 * them) or failed.
 */
export class SessionCapacity {
  private reservedSlots = 0;

  constructor(
    readonly max: number,
    private readonly held: () => number,
  ) {}

  /** Slots reserved by plans not yet committed or abandoned. */
  get reserved(): number {
    return this.reservedSlots;
  }

  /** A slot for a new session, if one is free (then reserved until `release`). */
  tryReserve(): boolean {
    if (this.held() + this.reservedSlots >= this.max) return false;
    this.reservedSlots++;
    return true;
  }

  /** `n` reserved slots given back (never below none). */
  release(n: number): void {
    this.reservedSlots = Math.max(0, this.reservedSlots - n);
  }
}

/** What one plan met at the cap. */
export interface AtCapacity {
  /** Events of sessions not held, not stored because the instance was at its cap. */
  events: number;
  /** Of their sessions, those not refused before (new to the refused filter). */
  sessions: number;
}

/**
 * Whether an event of a session not held may create it, given the engine's notes on its step:
 * an out-of-band event that failed the authority check (note `unauthorized`) creates nothing
 * (contract §4b), even when the session starts blind (refused before): the blind state is one
 * the engine was handed, not one the session had (docs/decisions.md 135). Held by
 * test/unit/capacity.test.ts "below the cap, creates no session and takes no place" and
 * test/unit/capacity-gate.test.ts "createsSession".
 */
export function createsSession(input: EngineInput, notes: readonly string[]): boolean {
  return !(input.seq === null && notes.includes('unauthorized'));
}

/** One plan's use of the instance's cap and of its partition's refused filter. */
export class CapacityGate {
  readonly atCapacity: AtCapacity = { events: 0, sessions: 0 };
  /** The partition's refused filter as this plan changed it (installed once it commits); null: not kept. */
  readonly refused: RefusedFilterView | null;
  private taken = 0;

  /**
   * `capacity`: the instance's cap (none: no cap); `refused`: the partition's refused filter
   * (none: not kept); `trustedKeys`: the engine's key ring, by which an out-of-band event is
   * authorized.
   */
  constructor(
    private readonly capacity: SessionCapacity | undefined,
    refused: RefusedFilter | undefined,
    private readonly trustedKeys: EngineOptions['trustedKeys'],
  ) {
    this.refused = refused === undefined ? null : new RefusedFilterView(refused);
  }

  /** Places this plan holds under the cap (the caller gives them back: `release`). */
  get reserved(): number {
    return this.taken;
  }

  /** The cap (Infinity: none). */
  get max(): number {
    return this.capacity?.max ?? Infinity;
  }

  /** May a session not held take a place: true (a place reserved, or no cap), or the cap is full. */
  take(): boolean {
    if (this.capacity === undefined) return true;
    if (!this.capacity.tryReserve()) return false;
    this.taken++;
    return true;
  }

  /**
   * The place `take` gave a session handed back: its first step failed, or left no state (an
   * unauthorized out-of-band event, `createsSession`).
   */
  giveBack(): void {
    if (this.capacity === undefined) return;
    this.capacity.release(1);
    this.taken--;
  }

  /** Whether a session not held starts blind: refused at the cap, or freed by the sweep, before. */
  startsBlind(sessionId: string): boolean {
    return this.refused?.has(sessionId) ?? false;
  }

  /**
   * An event of a session not held while the cap is full: counted, and its session marked
   * refused. False when it is not refused: an out-of-band event that fails the authority check
   * would leave no state (contract §4b), so it marks nothing, and unsigned junk sent while the
   * cap is full cannot make a session that comes later start blind (test/unit/capacity.test.ts
   * "at the cap, does not mark the session refused").
   */
  refuse(input: EngineInput): boolean {
    this.atCapacity.events++;
    if (input.seq === null && authorityOf(undefined, input, this.trustedKeys) !== null)
      return false;
    if (this.refused !== null && !this.refused.has(input.sessionId)) {
      this.refused.add(input.sessionId);
      this.atCapacity.sessions++;
    }
    return true;
  }

  /**
   * A session the sweep freed loses its evidence head F with its state: it joins the refused
   * filter, so that if it comes back it starts blind (F at the top), never with less than the
   * engine would have handed on (docs/decisions.md 124).
   */
  freed(sessionId: string): void {
    this.refused?.add(sessionId);
  }

  /**
   * Every place this plan took, given back: the plan was abandoned. A plan that reached its
   * transaction is given back by the partition (partition.ts) once it committed or failed, by
   * its `reserved` count.
   */
  release(): void {
    this.capacity?.release(this.taken);
    this.taken = 0;
  }
}
