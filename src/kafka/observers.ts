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
  const combined: ProcessorObserver = {};
  for (const k of OBSERVER_METHODS) Object.assign(combined, { [k]: all(k) });
  return combined;
}

/**
 * Every method of ProcessorObserver, as a table the compiler checks for completeness: a
 * method added to the interface and missing here fails to compile, instead of being dropped
 * silently by combineObservers.
 */
const METHOD_TABLE: { readonly [K in keyof Required<ProcessorObserver>]: true } = {
  batchEvents: true,
  output: true,
  deadLetter: true,
  transaction: true,
  kafkaTransaction: true,
  engineSteps: true,
  rebalance: true,
  resync: true,
  restored: true,
  lag: true,
  refusedAtCapacity: true,
  readiness: true,
};
const OBSERVER_METHODS = Object.keys(METHOD_TABLE) as (keyof ProcessorObserver)[];
