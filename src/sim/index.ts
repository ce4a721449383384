/** A deterministic fleet model (seeded): orchestrator profiles and interleaved event streams. */
export { Rng, deriveSeed } from './prng';
export {
  OrchestratorModel,
  planSession,
  randomPolicy,
  type ModelCounts,
  type PlanOptions,
  type Profile,
  type SessionPlan,
} from './orchestrator';
export {
  DEFAULT_START_TIME,
  FleetSimulation,
  generateFleet,
  generateFleetArray,
  type FleetOptions,
} from './fleet';
