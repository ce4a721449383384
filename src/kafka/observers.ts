/** Several observers as one (metrics, the /sessions verdict cache...), and a batch's tally. */
import type { Note } from '../engine/collector';
import type { ProcessorObserver } from './partition';

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

export function combineObservers(...observers: ProcessorObserver[]): ProcessorObserver {
  // Bound once: a method only one observer has (most of them) is called directly.
  const all = <K extends keyof ProcessorObserver>(k: K): ProcessorObserver[K] => {
    type Fn = (...a: unknown[]) => void;
    const fns: Fn[] = [];
    for (const o of observers) {
      const f = o[k] as Fn | undefined;
      if (f !== undefined) fns.push(f.bind(o));
    }
    if (fns.length === 0) return undefined;
    if (fns.length === 1) return fns[0] as ProcessorObserver[K];
    return ((...args: unknown[]) => {
      for (const f of fns) f(...args);
    }) as ProcessorObserver[K];
  };
  return {
    batchEvents: all('batchEvents'),
    output: all('output'),
    deadLetter: all('deadLetter'),
    transaction: all('transaction'),
    engineSteps: all('engineSteps'),
    rebalance: all('rebalance'),
    restored: all('restored'),
    lag: all('lag'),
    readiness: all('readiness'),
  };
}
