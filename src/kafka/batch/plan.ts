/**
 * What planning a batch reads and what it makes, as types: the planner's context
 * (`PlanContext`) and the plan of one transaction (`BatchPlan`). The planner is planner.ts;
 * the loop that plans a batch within the transaction budget is planBatch.ts.
 */
import type { OutRecord } from '../transport';
import type { Config } from '../../config/config';
import type { Output } from '../../engine/collector';
import type { EngineInput, EngineOptions, StepResult } from '../../engine/evolve';
import type { SessionState } from '../../engine/state';
import type { RegistryCodec } from '../../registry/codec';
import type { AtCapacity, SessionCapacity } from '../capacity/gate';
import type { RefusedFilter, RefusedFilterView } from '../capacity/refusedFilter';
import type { EventTally } from '../processorObserver';
import type { DeadLetterCode } from '../records';
import type { Stamp } from '../sessionStates';

/** The settings a batch's plan reads. */
export type PlanConfig = Pick<
  Config,
  'inputFormat' | 'verdictTopic' | 'spillTopic' | 'auditTopic' | 'dlqTopic' | 'changelogTopic'
>;

/** What encodes the engine's outputs (the registry codec, once its schemas are registered). */
export type OutputEncoder = Pick<
  RegistryCodec,
  'encodeVerdict' | 'encodeSpillRequest' | 'encodeAudit'
>;

/** The committed state of the partition's sessions, as the planner reads it. */
export interface CommittedStates {
  has(sessionId: string): boolean;
  /** A copy the caller may change in place, or undefined for an unknown session. */
  owned(sessionId: string): SessionState | undefined;
  /** When the session's SessionClosed was processed (sessionStates.ts); null: open or unknown. */
  closedSince?(sessionId: string): number | null;
}

/**
 * What earlier plans of a batch learned: sessions whose state could not be written at the end
 * of the batch, to be serialized after each of their records, so that the record that made it
 * so is found and dead-lettered.
 */
export class PlanLessons {
  readonly careful = new Set<string>();
}

export interface PlanContext {
  config: PlanConfig;
  encoder: OutputEncoder;
  engine: EngineOptions;
  committed: CommittedStates;
  /** Wall clock (ms): a verdict's decidedAt. */
  clock: () => number;
  /** Monotonic clock (ms) for the engine's time; `performance.now` in the processor. */
  timer: () => number;
  /**
   * Called once the records are through the engine, before the changelog records are made: may
   * add sessions to free (null) to the overlay (the processor's sweep of expired sessions).
   */
  sweep?: (overlay: Map<string, SessionState | null>) => void;
  /** The engine step (`evolveInPlace`); a test may give one that throws. */
  step?: (
    s: SessionState | undefined,
    e: EngineInput,
    decidedAt: number,
    o: EngineOptions,
  ) => StepResult;
  /** The state serializer (`serializeState`); a test may give one that throws. */
  serialize?: (s: SessionState) => Buffer;
  /** The largest record each topic takes (recordLimits.ts); default: Kafka's default. */
  limitOf?: (topic: string) => number;
  /** The instance's session cap (the capacity gate, capacity/gate.ts); none: no cap. */
  capacity?: SessionCapacity;
  /** The partition's sessions refused at capacity; none: not kept. */
  refused?: RefusedFilter;
  lessons?: PlanLessons;
  /**
   * What one transaction may take (docs/decisions.md 162); none: the whole batch. `planBatch`
   * stops adding records once either is reached (after at least one record).
   */
  budget?: TransactionBudget;
}

/** The work of one transaction: planning time and the estimated bytes it writes. */
export interface TransactionBudget {
  /** Milliseconds of planning (by `timer`). */
  ms: number;
  /** Estimated bytes of its records: outputs and dead letters, plus `STATE_ESTIMATE_BYTES` per session reached. */
  bytes: number;
}

/**
 * What a session's changelog record is reckoned at before it is serialized (at the end of the
 * plan): a typical state is ~0.5 KB serialized (bench/README.md), one at every bound up to 29 KB.
 */
export const STATE_ESTIMATE_BYTES = 1024;

export interface DeadLetterNote {
  code: DeadLetterCode;
  offset: string;
  message: string;
}

export interface BatchPlan {
  /** What the transaction writes, by topic: outputs and dead letters in record order, then the changelog. */
  sends: Map<string, OutRecord[]>;
  /** Each touched session's state after the batch; null: freed (its changelog record is a tombstone). */
  overlay: Map<string, SessionState | null>;
  /** Each touched session's stamp (processing time: the plan's), as its changelog record's headers hold it. */
  stamps: Map<string, Stamp>;
  /** The engine's outputs, in order (reported once committed). */
  delivered: Output[];
  deadLetters: DeadLetterNote[];
  tally: EventTally;
  /** Engine steps (events through `evolveInPlace`) and their total time in ms. */
  steps: number;
  engineMs: number;
  /** Records in `sends`. */
  records: number;
  atCapacity: AtCapacity;
  /** Slots of the session capacity the plan reserved (given back by the caller, `release`). */
  reserved: number;
  /** The refused filter's chunks as the plan changed them: installed once committed. */
  refused: RefusedFilterView | null;
  /** Input records the plan took (a prefix of those it was given), and the offset after them. */
  taken: number;
  nextOffset: string;
}
