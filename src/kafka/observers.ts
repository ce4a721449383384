/** Several observers as one (metrics, the /sessions verdict cache...). */
import type { ProcessorObserver } from './processorObserver';

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
    resync: all('resync'),
    restored: all('restored'),
    lag: all('lag'),
    refusedAtCapacity: all('refusedAtCapacity'),
    readiness: all('readiness'),
  };
}
