/** The pure decision engine (contract §2–§5): no I/O, no Kafka, deterministic. */
export * from './events';
export * from './outputs';
export { evolve, type EngineInput, type EngineOptions, type StepResult } from './evolve';
export { decide, evaluate, type Decided } from './decide';
export type { RequestInput, Evaluation } from './evaluation';
export { Fleet, engineOptions, DEFAULT_GRACE_MS, DEFAULT_IDLE_MS } from './fleet';
export * from './authority';
export { serializeState, deserializeState } from './serialize';
export { emptyState, type SessionState } from './state';
export type { Output, Note } from './collector';
export { ENGINE_VERSION } from './version';
