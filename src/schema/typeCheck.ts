/**
 * Compile-time proof that the engine's hand-written types (src/engine/events.ts, outputs.ts)
 * are exactly the types generated from the Avro schemas (src/schema/generated.ts). When a
 * schema or a type drifts, `tsc --noEmit -p .` fails here (and so does
 * test/unit/schema-types.test.ts, which type-checks this file). Types only: no runtime code.
 */
import type * as Engine from '../engine/events';
import type * as Out from '../engine/outputs';
import type * as Gen from './generated';

/** Identity of two types (not mere assignability: optionality and `readonly` count too). */
type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

export type SchemaMatchesEngineTypes = [
  Assert<Equals<Engine.Unit, Gen.Unit>>,
  Assert<Equals<Engine.Role, Gen.Role>>,
  Assert<Equals<Engine.Pin, Gen.Pin>>,
  Assert<Equals<Engine.Coverage, Gen.Coverage>>,
  Assert<Equals<Engine.SpillMode, Gen.SpillMode>>,
  Assert<Equals<Engine.TruncationReason, Gen.TruncationReason>>,
  Assert<Equals<Engine.Span, Gen.Span>>,
  Assert<Equals<Engine.Policy, Gen.Policy>>,
  Assert<Equals<Engine.SessionOpened, Gen.SessionOpened>>,
  Assert<Equals<Engine.TurnAppended, Gen.TurnAppended>>,
  Assert<Equals<Engine.Truncated, Gen.Truncated>>,
  Assert<Equals<Engine.CompactionRequested, Gen.CompactionRequested>>,
  Assert<Equals<Engine.CompactionCommitted, Gen.CompactionCommitted>>,
  Assert<Equals<Engine.SpillCompleted, Gen.SpillCompleted>>,
  Assert<Equals<Engine.SpillFailed, Gen.SpillFailed>>,
  Assert<Equals<Engine.LossAcknowledged, Gen.LossAcknowledged>>,
  Assert<Equals<Engine.SessionClosed, Gen.SessionClosed>>,
  Assert<Equals<Engine.ContextEvent, Gen.ContextChangeEvent>>,
  Assert<Equals<Out.RuleCode, Gen.RuleCode>>,
  Assert<Equals<Out.Decision, Gen.Decision>>,
  Assert<Equals<Out.Basis, Gen.Basis>>,
  Assert<Equals<Out.Action, Gen.Action>>,
  Assert<Equals<Out.UnitRange, Gen.UnitRange>>,
  Assert<Equals<Out.Reason, Gen.Reason>>,
  Assert<Equals<Out.Verdict, Gen.Verdict>>,
  Assert<Equals<Out.SpillRequest, Gen.SpillRequest>>,
  Assert<Equals<Out.AuditKind, Gen.AuditKind>>,
  Assert<Equals<Out.AuditCode, Gen.AuditCode>>,
  Assert<Equals<Out.AuditRecord, Gen.AuditRecord>>,
];
