/**
 * What the processor tells the rest of the program (metrics, the /sessions verdict cache, an
 * embedding program): the observer interface and the per-batch tally it is handed.
 */
import type { Note, Output } from '../engine/collector';
import type { DeadLetterCode } from './records';

/** What the processor reports (metrics hook up here); every method optional. */
export interface ProcessorObserver {
  /** Once per batch, after its engine steps and before its transaction: what its events did. */
  batchEvents?(tally: EventTally): void;
  output?(o: Output, latencyMs: number | null): void;
  deadLetter?(code: DeadLetterCode): void;
  /**
   * A batch's transaction ended; `seconds`, for a committed one: from the start of its plan to
   * its commit (a fetched batch may take several transactions: docs/decisions.md 162).
   */
  transaction?(outcome: 'committed' | 'aborted', records: number, seconds?: number): void;
  /**
   * A transaction of the processor's producers ended, as the broker sees it: one per batch
   * transaction with a producer per partition, one per group of them with one per process
   * (src/kafka/producers.ts); the restore's barriers included.
   */
  kafkaTransaction?(outcome: 'committed' | 'aborted'): void;
  /** Once per batch (with at least one step): its engine steps and their total time. */
  engineSteps?(steps: number, seconds: number): void;
  rebalance?(): void;
  /** A partition resynchronises from Kafka (a transaction's outcome unknown, fenced, a crash). */
  resync?(partition: number): void;
  restored?(seconds: number): void;
  lag?(partition: number, records: number): void;
  /**
   * Once per batch with events of sessions not held at the session cap: the sessions newly
   * refused (new to the refused filter) and the events not stored.
   */
  refusedAtCapacity?(sessions: number, events: number): void;
  readiness?(ready: boolean): void;
}

/**
 * What a batch's events did, counted in the batch and reported once (`batchEvents`), so that the
 * metrics cost a few label look-ups per batch instead of per event.
 */
export class EventTally {
  /** Events by type (MalformedRequest: answered dead letters). */
  readonly byType = new Map<string, number>();
  /** Events the rules ignored, by type. */
  readonly ignoredByType = new Map<string, number>();
  duplicates = 0;
  gaps = 0;

  add(type: string, notes: readonly Note[]): void {
    this.byType.set(type, (this.byType.get(type) ?? 0) + 1);
    for (const n of notes) {
      if (n === 'duplicate') this.duplicates++;
      else if (n === 'ignored')
        this.ignoredByType.set(type, (this.ignoredByType.get(type) ?? 0) + 1);
      else if (n === 'gap') this.gaps++;
    }
  }
}
