/** Several observers as one (metrics, the /sessions verdict cache...). */
import type { ProcessorObserver } from './partition';

export function combineObservers(...observers: ProcessorObserver[]): ProcessorObserver {
  const all = <K extends keyof ProcessorObserver>(k: K) =>
    ((...args: unknown[]) => {
      for (const o of observers) (o[k] as ((...a: unknown[]) => void) | undefined)?.(...args);
    }) as NonNullable<ProcessorObserver[K]>;
  return {
    event: all('event'),
    output: all('output'),
    deadLetter: all('deadLetter'),
    transaction: all('transaction'),
    engineStep: all('engineStep'),
    rebalance: all('rebalance'),
    restored: all('restored'),
    lag: all('lag'),
    readiness: all('readiness'),
  };
}
